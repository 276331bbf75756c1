package group

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// SyncResult tells a member what to do after a Sync.
type SyncResult struct {
	// Generation is the group's generation, which the member's commits
	// must now carry (in MemberRef.Generation).
	Generation int
	// Revoke lists the partitions the member owns but must give up: it
	// stops fetching them, commits their positions, and calls Revoked.
	// Until then it still owns them (and may commit them), and they are
	// listed again at every Sync.
	Revoke []TopicPartition
	// Assign lists the partitions the member owns from this Sync on: it
	// looks up their committed offsets and starts fetching them. Each
	// partition is listed once, in the Sync that hands it over.
	Assign []TopicPartition
	// Owned lists every partition the member owns after this Sync,
	// including Assign and Revoke: what it may fetch and commit. Never
	// nil; the other lists are nil when empty. Every list is sorted.
	Owned []TopicPartition
	// Pending lists the partitions the member is to receive but which
	// another member has not revoked yet; a later Sync assigns them.
	// When Revoke and Pending are both empty, the member holds exactly
	// its share of the current generation.
	Pending []TopicPartition
}

// MemberInfo describes a member of a group.
type MemberInfo struct {
	ID         string           // member id
	Topics     []string         // subscription, sorted
	Generation int              // the generation of the member's last Join or Sync
	Owned      []TopicPartition // partitions it owns now, sorted, never nil
	Assigned   []TopicPartition // its share of the current generation's assignment, sorted, never nil
	LastSeen   time.Time        // its last Join or Sync
}

// Join adds a new member to group, subscribed to topics, and rebalances
// the group; a claimed group (Claim) refuses it with [ErrGroupClaimed].
// It returns the member's id, "<group>-<n>" for the n-th member to join
// the group, and the new generation. The member owns nothing yet: its
// first Sync hands it its partitions.
//
// Member ids are compared as strings wherever order matters (Range and
// RoundRobin walk the members in that order, as Kafka does), so "g-10"
// comes before "g-2".
//
// Topics that do not exist (Options.Partitions says 0) are remembered; the
// group rebalances when a Sync finds that they appeared, or that a topic's
// partition count changed.
func (c *Coordinator) Join(group string, topics []string) (MemberRef, error) {
	return c.JoinClient(group, topics, c.opts.ClientID, c.opts.ClientHost)
}

// JoinClient is Join for a member whose client (its client id and host)
// the group metadata of a MetadataLog records as given, where Join
// records Options.ClientID and ClientHost.
func (c *Coordinator) JoinClient(group string, topics []string, clientID, clientHost string) (MemberRef, error) {
	if err := checkGroup(group); err != nil {
		return MemberRef{}, err
	}
	g := c.lockGroup(group, true)
	defer g.mu.Unlock()
	if g.claims > 0 {
		return MemberRef{}, fmt.Errorf("group: joining group %q: %w", group, ErrGroupClaimed)
	}
	now := c.opts.Now()
	g.issued++
	m := &member{
		id:         g.memberID(g.issued),
		topics:     sortedTopics(topics),
		lastSeen:   now,
		owned:      map[TopicPartition]struct{}{},
		clientID:   clientID,
		clientHost: clientHost,
	}
	g.members[m.id] = m
	g.noteDeadline(now.Add(c.opts.SessionTimeout))
	c.rebalanceGroupLocked(g)
	m.generation = g.generation
	return MemberRef{MemberID: m.id, Generation: m.generation}, nil
}

// Subscribe replaces the subscription of a member of group and, if it
// changed, rebalances the group. It fails like Sync for a member that is
// gone or unknown.
func (c *Coordinator) Subscribe(group, memberID string, topics []string) error {
	g, m, err := c.lockMember("subscribe", group, memberID)
	if err != nil {
		return err
	}
	defer g.mu.Unlock()
	if topics = sortedTopics(topics); !slices.Equal(topics, m.topics) {
		m.topics = topics
		c.rebalanceGroupLocked(g)
	}
	return nil
}

// Leave removes a member from group: its partitions are freed at once and
// the group rebalances. The consumer must have committed what it wants
// kept before, since its later commits fail with [ErrFenced]. Leaving
// twice fails with ErrFenced, an id the group never issued with
// [ErrUnknownMember].
func (c *Coordinator) Leave(group, memberID string) error {
	g, m, err := c.lockMember("leave", group, memberID)
	if err != nil {
		return err
	}
	defer g.mu.Unlock()
	g.removeLocked(m)
	c.rebalanceGroupLocked(g)
	return nil
}

// Sync is a member's heartbeat and its way to learn and take its share of
// the group: it records that the member is alive, rebalances if a
// subscribed topic's partition count changed, hands the member every
// partition of its share that no member owns, and reports which owned
// partitions it must revoke. See [SyncResult] for what the member does
// next; it must Sync more often than Options.SessionTimeout.
//
// A partition moving from member A to member B is handed to B only after
// A gave it back with Revoked, left, or was evicted: a partition never has
// two owners.
//
// A member that left or was evicted gets [ErrFenced]: it must stop
// fetching every partition without committing and Join again. An id the
// group never issued gets [ErrUnknownMember].
func (c *Coordinator) Sync(group, memberID string) (SyncResult, error) {
	g, m, err := c.lockMember("sync", group, memberID)
	if err != nil {
		return SyncResult{}, err
	}
	defer g.mu.Unlock()
	m.lastSeen = c.opts.Now()
	if c.countsChangedGroupLocked(g) {
		c.rebalanceGroupLocked(g)
	}
	res := SyncResult{Generation: g.generation}
	for _, tp := range m.assigned {
		switch owner := g.owner[tp]; owner {
		case m:
		case nil:
			g.owner[tp] = m
			m.owned[tp] = struct{}{}
			res.Assign = append(res.Assign, tp)
		default:
			res.Pending = append(res.Pending, tp)
		}
	}
	for tp := range m.owned {
		if g.target[tp] != m {
			res.Revoke = append(res.Revoke, tp)
		}
	}
	slices.SortFunc(res.Revoke, TopicPartition.Compare)
	res.Owned = sortedPartitions(m.owned)
	m.generation = g.generation
	return res, nil
}

// Revoked gives back partitions a member of group owns, normally those a
// Sync told it to revoke, once it has stopped fetching them and committed
// their positions. Their new owners receive them at their next Sync. If
// the member does not own one of parts, it returns [ErrNotOwner] and gives
// back nothing. It fails like Sync for a member that is gone or unknown.
func (c *Coordinator) Revoked(group, memberID string, parts []TopicPartition) error {
	g, m, err := c.lockMember("revocation", group, memberID)
	if err != nil {
		return err
	}
	defer g.mu.Unlock()
	for _, tp := range parts {
		if _, ok := m.owned[tp]; !ok {
			return fmt.Errorf("group: revoking %s by member %q of group %q: %w", tp, m.id, g.name, ErrNotOwner)
		}
	}
	for _, tp := range parts {
		delete(m.owned, tp)
		delete(g.owner, tp)
	}
	c.updateRevokeGroupLocked(g, m, c.opts.Now())
	return nil
}

// Members returns the members of group, sorted by id; nil for a group
// without members.
func (c *Coordinator) Members(group string) []MemberInfo {
	g := c.lockGroup(group, false)
	if g == nil {
		return nil
	}
	defer g.mu.Unlock()
	var out []MemberInfo
	for _, id := range slices.Sorted(maps.Keys(g.members)) {
		m := g.members[id]
		out = append(out, MemberInfo{
			ID:         m.id,
			Topics:     slices.Clone(m.topics),
			Generation: m.generation,
			Owned:      sortedPartitions(m.owned),
			Assigned:   append([]TopicPartition{}, m.assigned...),
			LastSeen:   m.lastSeen,
		})
	}
	return out
}

// Generation returns group's generation: 0 before its first member
// joins, then one more at every rebalance.
func (c *Coordinator) Generation(group string) int {
	g := c.lockGroup(group, false)
	if g == nil {
		return 0
	}
	defer g.mu.Unlock()
	return g.generation
}

// lockMember locks group and returns it with the live member memberID.
// On error nothing is locked.
func (c *Coordinator) lockMember(verb, group, memberID string) (*groupState, *member, error) {
	g := c.lockGroup(group, false)
	if g == nil {
		return nil, nil, fmt.Errorf("group: %s by member %q of group %q: %w", verb, memberID, group, ErrUnknownMember)
	}
	m, err := g.memberLocked(verb, memberID)
	if err != nil {
		g.mu.Unlock()
		return nil, nil, err
	}
	return g, m, nil
}

// sortedTopics returns a sorted copy of topics without duplicates.
func sortedTopics(topics []string) []string {
	out := slices.Clone(topics)
	slices.Sort(out)
	return slices.Compact(out)
}

// sortedPartitions returns the partitions of set, sorted; an empty,
// non-nil slice for an empty set.
func sortedPartitions(set map[TopicPartition]struct{}) []TopicPartition {
	out := make([]TopicPartition, 0, len(set))
	for tp := range set {
		out = append(out, tp)
	}
	slices.SortFunc(out, TopicPartition.Compare)
	return out
}

// Release gives back every partition a member of group owns that keep
// does not list, as Revoked does: for a consumer outside the process that
// reports what it holds (Kafka's KIP-848 heartbeat) rather than what it
// gave up. Partitions in keep that the member does not own are ignored;
// its next Sync hands them out if they are its share. It fails like Sync
// for a member that is gone or unknown.
func (c *Coordinator) Release(group, memberID string, keep []TopicPartition) error {
	g, m, err := c.lockMember("release", group, memberID)
	if err != nil {
		return err
	}
	defer g.mu.Unlock()
	kept := make(map[TopicPartition]struct{}, len(keep))
	for _, tp := range keep {
		kept[tp] = struct{}{}
	}
	for tp := range m.owned {
		if _, ok := kept[tp]; !ok {
			delete(m.owned, tp)
			delete(g.owner, tp)
		}
	}
	c.updateRevokeGroupLocked(g, m, c.opts.Now())
	return nil
}
