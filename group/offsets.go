package group

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// OffsetAndMetadata is a committed offset, as Kafka's consumer commits it.
type OffsetAndMetadata struct {
	// Offset is the offset of the next record to consume: the offset of
	// the last processed record plus one. Never negative.
	Offset int64
	// Metadata is an optional string stored with the offset, at most
	// Options.MetadataMaxBytes bytes.
	Metadata string
	// CommitTime is when the offset was committed, in whole milliseconds
	// (the record format's precision) and UTC. Commit stamps the
	// Coordinator's clock when it is zero.
	CommitTime time.Time
	// TopicID is the id of the topic the offset was committed for, as
	// Kafka 4.1 records it (KAFKA-19141): Commit stamps the topic's
	// current id (Options.TopicID) when it is zero, and an offset whose id
	// is not the topic's current one belongs to an earlier topic of the
	// same name, which Committed and Offsets do not return. Zero in
	// commits written without one (older stores, Kafka before 4.1): such
	// an offset is taken for the topic of its name.
	TopicID [16]byte
}

// Commit is one record of __consumer_offsets: the committed offset of a
// group for one partition, or, with Deleted set, the tombstone that
// deletes it.
type Commit struct {
	Group      string    // group id
	Topic      string    // topic name
	Partition  int       // partition number
	Offset     int64     // committed offset (next record to consume); 0 in a tombstone
	Metadata   string    // committed metadata; empty in a tombstone
	CommitTime time.Time // when committed, whole milliseconds, UTC; zero in a tombstone
	TopicID    [16]byte  // the id of the topic committed for; zero if unknown and in a tombstone
	Deleted    bool      // a tombstone: the group's offset for the partition is deleted
}

// TopicPartition returns the partition c is about.
func (c Commit) TopicPartition() TopicPartition {
	return TopicPartition{Topic: c.Topic, Partition: c.Partition}
}

// OffsetAndMetadata returns the offset c commits.
func (c Commit) OffsetAndMetadata() OffsetAndMetadata {
	return OffsetAndMetadata{Offset: c.Offset, Metadata: c.Metadata, CommitTime: c.CommitTime, TopicID: c.TopicID}
}

// OffsetLog persists commits. The store implements it by appending the
// commits, encoded with [EncodeCommit], to its compacted internal topic
// __consumer_offsets as one record batch per call, and feeds them back
// with [Coordinator.Replay] when it opens.
//
// Append must write all of commits or none, and return only once they are
// as durable as the store's flush policy makes any append. When it returns
// an error the Coordinator applies none of them. It is called with the
// group's lock held: it must not call back into the Coordinator, and it
// must not keep commits after it returns.
type OffsetLog interface {
	Append(commits []Commit) error
}

// MemberRef identifies the member that commits, and the generation it
// believes current: the one returned by its last Join or Sync. The zero
// MemberRef makes a simple commit, from a consumer outside any membership
// (Kafka's standalone consumer with assign()).
type MemberRef struct {
	MemberID   string // the member id Join returned; empty for a simple commit
	Generation int    // the Generation of the member's last Join or Sync; 0 for a simple commit
}

// Commit commits offsets for group, appending them to the OffsetLog as one
// batch before they become visible: when Commit returns nil they are
// durable and Committed returns them; when it returns an error none of
// them is stored.
//
// A member commits with its MemberRef. It may commit only partitions it
// owns (including those it was told to revoke and has not yet given back),
// else [ErrNotOwner]; a member that left or was evicted, or a ref whose
// Generation is not the one the member's last Join or Sync returned, gets
// [ErrFenced]; an id the group never issued, [ErrUnknownMember]. The zero
// MemberRef makes a simple commit, allowed only while the group has no
// members ([ErrGroupActive]); Options.Partitions, if set, must know the
// partitions ([ErrUnknownPartition]).
//
// Every offset must be non-negative ([ErrInvalidOffset]) with metadata of
// at most Options.MetadataMaxBytes ([ErrMetadataTooLarge]). A zero
// CommitTime is replaced with the clock's time; every CommitTime is
// truncated to milliseconds. Committing no offsets checks the ref and
// writes nothing.
//
// Commit blocks while the OffsetLog appends; other calls on the same group
// wait for it.
func (c *Coordinator) Commit(group string, ref MemberRef, offsets map[TopicPartition]OffsetAndMetadata) error {
	commits, err := c.commitsOf(group, offsets, ref == MemberRef{})
	if err != nil {
		return err
	}
	g := c.lockGroup(group, true)
	defer g.mu.Unlock()
	if err := g.checkCommitterLocked(ref, commits, false); err != nil {
		return err
	}
	if len(commits) == 0 {
		return nil
	}
	c.stampLocked(commits)
	if c.log != nil {
		if err := c.log.Append(commits); err != nil {
			return fmt.Errorf("group: committing %d offsets of group %q: %w", len(commits), group, err)
		}
	}
	for _, cm := range commits {
		g.setOffsetLocked(cm.TopicPartition(), cm.OffsetAndMetadata())
	}
	return nil
}

// commitsOf checks the offsets a commit to group carries and returns them
// as commits, in partition order (the order the log, and with it a replay,
// sees them in), with their topics' ids. exists says whether the
// partitions must exist (Options.Partitions).
func (c *Coordinator) commitsOf(group string, offsets map[TopicPartition]OffsetAndMetadata, exists bool) ([]Commit, error) {
	if err := checkGroup(group); err != nil {
		return nil, err
	}
	parts := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		parts = append(parts, tp)
	}
	slices.SortFunc(parts, TopicPartition.Compare)
	commits := make([]Commit, 0, len(offsets))
	for _, tp := range parts {
		om := offsets[tp]
		switch {
		case om.Offset < 0:
			return nil, fmt.Errorf("group: commit of offset %d for %s by group %q: %w", om.Offset, tp, group, ErrInvalidOffset)
		case len(om.Metadata) > c.opts.MetadataMaxBytes:
			return nil, fmt.Errorf("group: commit for %s by group %q has %d bytes of metadata, over the limit of %d: %w",
				tp, group, len(om.Metadata), c.opts.MetadataMaxBytes, ErrMetadataTooLarge)
		}
		if err := c.checkPartition(tp, exists); err != nil {
			return nil, err
		}
		if om.TopicID == ([16]byte{}) {
			om.TopicID = c.topicID(tp.Topic)
		}
		commits = append(commits, Commit{Group: group, Topic: tp.Topic, Partition: tp.Partition,
			Offset: om.Offset, Metadata: om.Metadata, CommitTime: om.CommitTime, TopicID: om.TopicID})
	}
	return commits, nil
}

// stampLocked gives the commits without a CommitTime the clock's, and
// truncates every CommitTime to milliseconds.
func (c *Coordinator) stampLocked(commits []Commit) {
	now := toMillis(c.opts.Now())
	for i := range commits {
		if commits[i].CommitTime.IsZero() {
			commits[i].CommitTime = now
		} else {
			commits[i].CommitTime = toMillis(commits[i].CommitTime)
		}
	}
}

// toMillis truncates t to whole milliseconds, in UTC, as the record
// format stores it.
func toMillis(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()).UTC() }

// checkCommitterLocked checks that ref may commit the partitions of
// commits in g. A zero ref is refused while g has members, unless
// withMembers is set.
func (g *groupState) checkCommitterLocked(ref MemberRef, commits []Commit, withMembers bool) error {
	if ref.MemberID == "" {
		switch {
		case ref.Generation != 0:
			return fmt.Errorf("group: commit with generation %d and no member id to group %q: %w", ref.Generation, g.name, ErrUnknownMember)
		case len(g.members) > 0 && !withMembers:
			return fmt.Errorf("group: simple commit to group %q, which has %d members: %w", g.name, len(g.members), ErrGroupActive)
		}
		return nil
	}
	m, err := g.memberLocked("commit", ref.MemberID)
	if err != nil {
		return err
	}
	if ref.Generation != m.generation {
		return fmt.Errorf("group: commit by member %q of group %q at generation %d, its current generation is %d: %w",
			m.id, g.name, ref.Generation, m.generation, ErrFenced)
	}
	for _, cm := range commits {
		if _, ok := m.owned[cm.TopicPartition()]; !ok {
			return fmt.Errorf("group: commit for %s by member %q of group %q: %w", cm.TopicPartition(), m.id, g.name, ErrNotOwner)
		}
	}
	return nil
}

// Replay applies commits read back from the OffsetLog, in log order,
// without appending them anywhere: a commit sets its group's offset for its
// partition, a tombstone deletes it. The store calls it while it opens,
// before any member joins. Commits with an invalid group id are skipped.
func (c *Coordinator) Replay(commits ...Commit) {
	var g *groupState
	for _, cm := range commits {
		if checkGroup(cm.Group) != nil {
			continue
		}
		if g == nil || g.name != cm.Group {
			if g != nil {
				g.mu.Unlock()
			}
			g = c.lockState(cm.Group, true)
		}
		if cm.Deleted {
			g.deleteOffsetLocked(cm.TopicPartition())
		} else {
			g.setOffsetLocked(cm.TopicPartition(), cm.OffsetAndMetadata())
		}
	}
	if g != nil {
		g.mu.Unlock()
	}
}

// Committed returns group's committed offset for a partition, and whether
// there is one. An offset committed for an earlier topic of the name (its
// TopicID is not the topic's current id) is none.
func (c *Coordinator) Committed(group, topic string, partition int) (OffsetAndMetadata, bool) {
	g := c.lockGroup(group, false)
	if g == nil {
		return OffsetAndMetadata{}, false
	}
	defer g.mu.Unlock()
	om, ok := g.offsets[TopicPartition{Topic: topic, Partition: partition}]
	if !ok || !c.current(topic, om) {
		return OffsetAndMetadata{}, false
	}
	return om, true
}

// Offsets returns a copy of all of group's committed offsets, without
// those committed for earlier topics of their names; an empty map for a
// group without any.
func (c *Coordinator) Offsets(group string) map[TopicPartition]OffsetAndMetadata {
	g := c.lockGroup(group, false)
	if g == nil {
		return map[TopicPartition]OffsetAndMetadata{}
	}
	defer g.mu.Unlock()
	out := maps.Clone(g.offsets)
	maps.DeleteFunc(out, func(tp TopicPartition, om OffsetAndMetadata) bool { return !c.current(tp.Topic, om) })
	return out
}

// topicID returns the current id of topic, zero if unknown.
func (c *Coordinator) topicID(topic string) [16]byte {
	if c.opts.TopicID == nil {
		return [16]byte{}
	}
	return c.opts.TopicID(topic)
}

// current reports whether om was committed for the topic of its name that
// exists now: it carries that topic's id, or no id.
func (c *Coordinator) current(topic string, om OffsetAndMetadata) bool {
	return om.TopicID == ([16]byte{}) || om.TopicID == c.topicID(topic)
}

// DeleteStaleOffsets deletes, in every group, the committed offsets that
// belong to no partition that exists: of a topic that does not exist (per
// Options.Partitions), of a partition past its count, or committed for an
// earlier topic of the name (per Options.TopicID). A store calls it once
// it has replayed its offsets, so that a DeleteTopic a crash interrupted
// before its tombstones leaves nothing behind. It returns how many offsets
// it deleted.
func (c *Coordinator) DeleteStaleOffsets() (int, error) {
	n := 0
	var errs []error
	for _, g := range c.all() {
		g.mu.Lock()
		parts := g.partsLocked(func(tp TopicPartition, om OffsetAndMetadata) bool {
			return (c.opts.Partitions != nil && tp.Partition >= c.partitions(tp.Topic)) || !c.current(tp.Topic, om)
		})
		err := c.deleteGroupLocked(g, parts)
		if err == nil {
			n += len(parts)
		}
		errs = append(errs, err)
		g.mu.Unlock()
	}
	return n, errors.Join(errs...)
}

// DeleteOffsets deletes group's committed offsets for parts, or all of
// them when parts is empty, appending a tombstone for each offset that
// exists (committed, or pending in a transaction, which it drops) to the
// OffsetLog as one batch before it disappears. Partitions without an
// offset are ignored. Deleting all of them deletes the group's metadata
// too, with a tombstone if the log is a MetadataLog.
//
// Deleting all offsets needs a group without members and unclaimed
// ([ErrGroupClaimed]); deleting some needs
// that no member subscribes to their topics (Kafka's OffsetDelete rule).
// Otherwise it returns [ErrGroupActive] and deletes nothing. On an
// OffsetLog error nothing is deleted.
func (c *Coordinator) DeleteOffsets(group string, parts ...TopicPartition) error {
	if err := checkGroup(group); err != nil {
		return err
	}
	g := c.lockGroup(group, false)
	if g == nil {
		return nil
	}
	defer g.mu.Unlock()
	if len(parts) == 0 {
		if g.claims > 0 {
			return fmt.Errorf("group: deleting the offsets of group %q: %w", group, ErrGroupClaimed)
		}
		if len(g.members) > 0 {
			return fmt.Errorf("group: deleting the offsets of group %q, which has %d members: %w", group, len(g.members), ErrGroupActive)
		}
		parts = g.partsLocked(func(TopicPartition, OffsetAndMetadata) bool { return true })
		if err := c.deleteGroupLocked(g, parts); err != nil {
			return err
		}
		if ml, ok := c.log.(MetadataLog); ok && g.meta != nil {
			ml.AppendMetadata(group, nil)
		}
		g.meta = nil
		return nil
	}
	for _, tp := range parts {
		if !g.hasLocked(tp) {
			continue
		}
		for _, m := range g.members {
			if m.subscribes(tp.Topic) {
				return fmt.Errorf("group: deleting the offset of %s of group %q, whose member %q subscribes to %s: %w",
					tp, group, m.id, tp.Topic, ErrGroupActive)
			}
		}
	}
	return c.deleteGroupLocked(g, parts)
}

// DeleteTopic deletes every group's committed offsets for topic, which no
// longer exists, whatever the groups' members subscribe to: Kafka drops the
// offsets of deleted partitions so that a topic created again under the
// name is read from its start. DeleteOffsets, the admin operation, refuses
// while a member subscribes to the topic.
//
// id is the deleted topic's id: the offsets committed with it, or with no
// id, go; an offset committed for a topic of the name created since (with
// another id) stays. A zero id deletes every offset of the name.
func (c *Coordinator) DeleteTopic(topic string, id [16]byte) error {
	var errs []error
	for _, g := range c.all() {
		g.mu.Lock()
		c.expireGroupLocked(g)
		parts := g.partsLocked(func(tp TopicPartition, om OffsetAndMetadata) bool {
			return tp.Topic == topic && (id == [16]byte{} || om.TopicID == id || om.TopicID == [16]byte{})
		})
		errs = append(errs, c.deleteGroupLocked(g, parts))
		g.mu.Unlock()
	}
	return errors.Join(errs...)
}

// deleteGroupLocked writes tombstones for the offsets of parts that g has
// (committed, or pending in a transaction), then forgets them. The caller
// holds g.mu.
func (c *Coordinator) deleteGroupLocked(g *groupState, parts []TopicPartition) error {
	group := g.name
	var tombstones []Commit
	for _, tp := range parts {
		if g.hasLocked(tp) {
			tombstones = append(tombstones, Commit{Group: group, Topic: tp.Topic, Partition: tp.Partition, Deleted: true})
		}
	}
	if len(tombstones) == 0 {
		return nil
	}
	slices.SortFunc(tombstones, func(a, b Commit) int { return a.TopicPartition().Compare(b.TopicPartition()) })
	tombstones = slices.CompactFunc(tombstones, func(a, b Commit) bool { return a.TopicPartition() == b.TopicPartition() })
	if c.log != nil {
		if err := c.log.Append(tombstones); err != nil {
			return fmt.Errorf("group: deleting %d offsets of group %q: %w", len(tombstones), group, err)
		}
	}
	for _, t := range tombstones {
		g.deleteOffsetLocked(t.TopicPartition())
	}
	return nil
}
