package group

import (
	"fmt"
	"maps"
	"slices"
)

// MetadataLog is an [OffsetLog] that also persists groups' membership,
// as Kafka's coordinator does in __consumer_offsets: a Coordinator whose
// OffsetLog implements it appends a group's [GroupMetadata] at every
// rebalance of the group (a member joined, left, was evicted or changed
// its subscription, or a subscribed topic's partition count changed),
// and a tombstone (nil md) when DeleteOffsets deletes the whole group.
//
// Membership is a description, not state the Coordinator needs: a failed
// append does not fail the call that rebalanced, so AppendMetadata
// returns nothing and reports its own failures (the store logs them). It
// is called with the group's lock held, like Append, and must not keep md
// after it returns.
type MetadataLog interface {
	OffsetLog
	AppendMetadata(group string, md *GroupMetadata)
}

// persistMetadataGroupLocked records g's membership of the generation
// just computed and appends it to the log, if it is a MetadataLog. The
// caller holds g.mu.
func (c *Coordinator) persistMetadataGroupLocked(g *groupState) {
	ml, ok := c.log.(MetadataLog)
	if !ok {
		return
	}
	md := &GroupMetadata{
		ProtocolType: ConsumerProtocolType,
		Generation:   int32(g.generation),
		StateTime:    toMillis(c.opts.Now()),
	}
	if len(g.members) > 0 {
		md.Protocol = c.opts.Assignor.Name()
	}
	for _, id := range slices.Sorted(maps.Keys(g.members)) {
		m := g.members[id]
		if md.Leader == "" {
			md.Leader = id
		}
		md.Members = append(md.Members, MemberMetadata{
			MemberID:         id,
			ClientID:         m.clientID,
			ClientHost:       m.clientHost,
			RebalanceTimeout: c.opts.RebalanceTimeout,
			SessionTimeout:   c.opts.SessionTimeout,
			Subscription:     AppendSubscription(nil, m.topics, sortedPartitions(m.owned)),
			Assignment:       AppendAssignment(nil, m.assigned),
		})
	}
	ml.AppendMetadata(g.name, md)
	g.meta = md
}

// ReplayMetadata applies a group metadata record read back from the log,
// in log order with the commits (Replay), without appending it anywhere:
// md becomes the group's [Coordinator.Metadata]; nil, a tombstone,
// deletes it. The group's generations go on from md's: its next
// rebalance is at a later one. A record with an invalid group id is
// skipped.
func (c *Coordinator) ReplayMetadata(group string, md *GroupMetadata) {
	if checkGroup(group) != nil {
		return
	}
	g := c.lockState(group, true)
	defer g.mu.Unlock()
	g.meta = md
	if md != nil {
		g.generation = max(g.generation, int(md.Generation))
	}
}

// PublishMetadata appends md, the membership of a group whose members the
// Coordinator does not manage (a claimed group, Claim: the Kafka clients
// of a classic group that package broker coordinates), to the log as the
// group's metadata, and makes it the group's [Coordinator.Metadata]. A
// group with members of the Coordinator refuses it with
// [ErrGroupActive]: their membership is the Coordinator's to write. The
// Coordinator keeps md; the caller must not modify it afterwards.
func (c *Coordinator) PublishMetadata(group string, md *GroupMetadata) error {
	if err := checkGroup(group); err != nil {
		return err
	}
	if md == nil {
		return fmt.Errorf("group: publishing no metadata for group %q: %w", group, ErrBadRecord)
	}
	for i := range md.Members {
		m := &md.Members[i]
		for _, s := range []string{m.MemberID, m.InstanceID, m.ClientID, m.ClientHost} {
			if len(s) > maxStringLen {
				return fmt.Errorf("group: member of group %q with a string of %d bytes: %w", group, len(s), ErrBadRecord)
			}
		}
	}
	if len(md.ProtocolType) > maxStringLen || len(md.Protocol) > maxStringLen || len(md.Leader) > maxStringLen {
		return fmt.Errorf("group: metadata of group %q with a string over %d bytes: %w", group, maxStringLen, ErrBadRecord)
	}
	g := c.lockGroup(group, true)
	defer g.mu.Unlock()
	if len(g.members) > 0 {
		return fmt.Errorf("group: publishing the metadata of group %q, which has %d members of the store: %w", group, len(g.members), ErrGroupActive)
	}
	if ml, ok := c.log.(MetadataLog); ok {
		ml.AppendMetadata(group, md)
	}
	g.meta = md
	return nil
}

// Metadata returns the latest metadata of group, written by a rebalance
// or PublishMetadata or replayed, and whether there is any. The result is
// shared: the caller must not modify it.
func (c *Coordinator) Metadata(group string) (*GroupMetadata, bool) {
	g := c.lockState(group, false)
	if g == nil {
		return nil, false
	}
	defer g.mu.Unlock()
	return g.meta, g.meta != nil
}

// EndStaleMembership ends the membership that the metadata of a replayed
// log records but that no member of the Coordinator, nor a claim, holds:
// the members of the process that wrote the log before it stopped, which
// are gone with it. For each such group it appends metadata without
// members, at the next generation, as Kafka writes a group that lost its
// members. A store calls it once it has replayed its log, before members
// join. It returns how many groups it ended.
func (c *Coordinator) EndStaleMembership() int {
	ml, ok := c.log.(MetadataLog)
	if !ok {
		return 0
	}
	n := 0
	for _, g := range c.all() {
		g.mu.Lock()
		if g.meta != nil && len(g.meta.Members) > 0 && len(g.members) == 0 && g.claims == 0 {
			md := &GroupMetadata{
				ProtocolType: g.meta.ProtocolType,
				Generation:   g.meta.Generation + 1,
				StateTime:    toMillis(c.opts.Now()),
			}
			g.generation = max(g.generation, int(md.Generation))
			ml.AppendMetadata(g.name, md)
			g.meta = md
			n++
		}
		g.mu.Unlock()
	}
	return n
}

// LeaveAll removes every member of every group, as if each had left, and
// rebalances each group that had any: a MetadataLog records it without
// members, at the next generation. A store calls it as it closes, while
// its log still takes appends, so that the membership its consumers end
// with is recorded by the process that ran them; their later calls (a
// Leave from a Consumer's Close) get [ErrFenced] and write nothing. It
// returns how many groups it ended.
func (c *Coordinator) LeaveAll() int {
	n := 0
	for _, g := range c.all() {
		g.mu.Lock()
		if len(g.members) > 0 {
			for _, m := range g.members {
				g.removeLocked(m)
			}
			c.rebalanceGroupLocked(g)
			n++
		}
		g.mu.Unlock()
	}
	return n
}
