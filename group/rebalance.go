package group

import (
	"maps"
	"slices"
	"time"
)

// The incremental rebalance.
//
// A group keeps two maps of its partitions. The target says where each
// partition should be: the assignor's answer, recomputed (and the
// generation bumped) whenever the members or their subscriptions change,
// or a subscribed topic's partition count does. The owner says where each
// partition is: the member that was handed it by a Sync and has not given
// it back. Only two things write the owner map:
//
//   - Sync hands a member the partitions of its target that have no owner;
//   - Revoked, Leave and eviction remove owners.
//
// So a partition has at most one owner at every instant, whatever the
// target says, and ownership converges to the target: after every member
// has synced, revoked what it was told to, and synced again (with no
// change to the group in between), every member owns exactly its target.
// This is Kafka's cooperative protocol (KIP-429) with the coordinator,
// not the consumers, holding the state; a partition that moves is revoked
// by its old owner before its new owner is handed it.

// rebalanceGroupLocked starts a new generation: it reads the partition
// counts of the subscribed topics, runs the assignor over the members
// (passing what each owns now, so that Sticky keeps it where it is) and
// makes the result the target, which a MetadataLog records. Ownership
// changes only through Sync and Revoked. The caller holds g.mu.
func (c *Coordinator) rebalanceGroupLocked(g *groupState) {
	g.generation++
	ids := slices.Sorted(maps.Keys(g.members))
	clear(g.counts)
	members := make([]Member, len(ids))
	for i, id := range ids {
		m := g.members[id]
		for _, t := range m.topics {
			if _, ok := g.counts[t]; !ok {
				g.counts[t] = c.partitions(t)
			}
		}
		members[i] = Member{ID: id, Topics: m.topics, Owned: sortedPartitions(m.owned), Generation: g.generation - 1}
	}
	assignment := c.opts.Assignor.Assign(members, g.counts)

	clear(g.target)
	for _, id := range ids {
		m := g.members[id]
		m.assigned = m.assigned[:0]
		for _, tp := range assignment[id] {
			// A well-behaved assignor gives each partition of a subscribed
			// topic to one subscribed member; keep to that whatever it
			// returns.
			if _, taken := g.target[tp]; taken || !m.subscribes(tp.Topic) ||
				tp.Partition < 0 || tp.Partition >= g.counts[tp.Topic] {
				continue
			}
			g.target[tp] = m
			m.assigned = append(m.assigned, tp)
		}
		slices.SortFunc(m.assigned, TopicPartition.Compare)
	}
	now := c.opts.Now()
	for _, id := range ids {
		c.updateRevokeGroupLocked(g, g.members[id], now)
	}
	c.persistMetadataGroupLocked(g)
}

// countsChangedGroupLocked reports whether the partition count of a topic
// the group subscribes to differs from the count of the last rebalance.
// The caller holds g.mu.
func (c *Coordinator) countsChangedGroupLocked(g *groupState) bool {
	for t, n := range g.counts {
		if c.partitions(t) != n {
			return true
		}
	}
	return false
}

// updateRevokeGroupLocked starts the clock of Options.RebalanceTimeout when
// m owns a partition outside its target, and stops it when it owns none.
// The caller holds g.mu.
func (c *Coordinator) updateRevokeGroupLocked(g *groupState, m *member, now time.Time) {
	revoking := false
	for tp := range m.owned {
		if g.target[tp] != m {
			revoking = true
			break
		}
	}
	switch {
	case !revoking:
		m.revokeSince = time.Time{}
	case m.revokeSince.IsZero():
		m.revokeSince = now
		g.noteDeadline(now.Add(c.opts.RebalanceTimeout))
	}
}

// subscribes reports whether m subscribes to topic.
func (m *member) subscribes(topic string) bool {
	_, ok := slices.BinarySearch(m.topics, topic)
	return ok
}
