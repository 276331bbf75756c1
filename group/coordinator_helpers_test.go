package group

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// epoch is the fake clock's start: 2023-11-14 22:13:20 UTC, 1700000000000
// ms.
var epoch = time.UnixMilli(1_700_000_000_000).UTC()

// fakeClock is an injected clock, safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

// newClock returns a clock at epoch.
func newClock() *fakeClock { return &fakeClock{t: epoch} }

// Now returns the clock's time.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// memLog is an in-memory OffsetLog that keeps every batch and can be made
// to fail.
type memLog struct {
	mu      sync.Mutex
	batches [][]Commit
	fail    error // returned by Append while set
}

// Append implements OffsetLog.
func (l *memLog) Append(commits []Commit) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return l.fail
	}
	l.batches = append(l.batches, slices.Clone(commits))
	return nil
}

// commits returns every commit appended, in order.
func (l *memLog) commits() []Commit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Concat(l.batches...)
}

// errDisk is the error a failing memLog returns.
var errDisk = errors.New("disk on fire")

// topicTable is a mutable partition-count table for Options.Partitions.
type topicTable struct {
	mu     sync.Mutex
	counts map[string]int
}

// newTopics returns a table holding counts.
func newTopics(counts map[string]int) *topicTable { return &topicTable{counts: counts} }

// Partitions implements Options.Partitions.
func (t *topicTable) Partitions(topic string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counts[topic]
}

// set changes a topic's partition count.
func (t *topicTable) set(topic string, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts[topic] = n
}

// fixture is a Coordinator with a fake clock, a memory log and a topic
// table.
type fixture struct {
	*Coordinator
	clock  *fakeClock
	log    *memLog
	topics *topicTable
}

// newFixture returns a Coordinator over topics counts with the assignor a
// (nil for the default) and default timeouts.
func newFixture(counts map[string]int, a Assignor) *fixture {
	f := &fixture{clock: newClock(), log: &memLog{}, topics: newTopics(counts)}
	f.Coordinator = NewCoordinator(f.log, &Options{Now: f.clock.Now, Assignor: a, Partitions: f.topics.Partitions})
	return f
}

// join joins a member and fails the test on error.
func (f *fixture) join(t testing.TB, group string, topics ...string) MemberRef {
	t.Helper()
	ref, err := f.Join(group, topics)
	require.NoError(t, err)
	return ref
}

// sync syncs a member and fails the test on error.
func (f *fixture) sync(t testing.TB, group, id string) SyncResult {
	t.Helper()
	res, err := f.Sync(group, id)
	require.NoError(t, err)
	return res
}

// settle runs rounds of Sync and Revoked over every member of group until
// a round changes nothing, and fails the test if that takes more than
// three rounds. It returns the last SyncResult of each member.
func (f *fixture) settle(t testing.TB, group string) map[string]SyncResult {
	t.Helper()
	last := map[string]SyncResult{}
	for round := 0; ; round++ {
		require.Less(t, round, 3, "group %s does not converge", group)
		changed := false
		for _, m := range f.Members(group) {
			res := f.sync(t, group, m.ID)
			last[m.ID] = res
			if len(res.Revoke) > 0 {
				require.NoError(t, f.Revoked(group, m.ID, res.Revoke))
			}
			changed = changed || len(res.Assign) > 0 || len(res.Revoke) > 0
		}
		if !changed {
			return last
		}
	}
}

// requireOwnersDisjoint checks the protocol's invariant in group: no
// partition is owned by two members, and the owner map agrees with every
// member's owned set.
func requireOwnersDisjoint(t testing.TB, c *Coordinator, group string) {
	t.Helper()
	owners := map[TopicPartition]string{}
	for _, m := range c.Members(group) {
		for _, tp := range m.Owned {
			prev, dup := owners[tp]
			require.False(t, dup, "%s owned by %s and %s", tp, prev, m.ID)
			owners[tp] = m.ID
		}
	}
	g := c.lookup(group, false)
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	require.Len(t, g.owner, len(owners), "owner map and members disagree")
	for tp, m := range g.owner {
		require.Equal(t, owners[tp], m.id, "owner of %s", tp)
	}
}

// requireConverged checks that every member of group owns exactly its
// share of the target, and that every partition of a subscribed topic is
// owned by exactly one member subscribed to it.
func requireConverged(t testing.TB, f *fixture, group string) {
	t.Helper()
	members := f.Members(group)
	var as []Member
	a := Assignment{}
	for _, m := range members {
		require.Equal(t, m.Assigned, m.Owned, "member %s", m.ID)
		as = append(as, Member{ID: m.ID, Topics: m.Topics})
		a[m.ID] = m.Owned
	}
	if len(members) == 0 {
		return
	}
	counts := map[string]int{}
	for _, m := range members {
		for _, topic := range m.Topics {
			if n := f.topics.Partitions(topic); n > 0 {
				counts[topic] = n
			}
		}
	}
	requireValid(t, as, counts, a)
}
