package group

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// consumer is a simulated consumer following the protocol. It knows only
// what the Coordinator told it.
type consumer struct {
	group  string
	ref    MemberRef
	owned  map[TopicPartition]struct{} // what it believes it owns
	revoke []TopicPartition            // what its last Sync told it to revoke
	fenced bool                        // it learned it is no longer a member
}

// simulation drives random consumers against one Coordinator.
type simulation struct {
	t         *testing.T
	rng       *rand.Rand
	f         *fixture
	groups    []string
	topics    []string
	consumers []*consumer
	offset    int64 // the next offset committed, so every commit is distinct
}

// TestPropertyNeverTwoOwners runs random sequences of joins, leaves,
// syncs, revokes, commits, subscription and topic changes and clock
// advances (some past the session timeout), and checks after every step
// that no partition has two owners — in the Coordinator, and in what the
// live consumers believe — and at the end that the groups converge.
func TestPropertyNeverTwoOwners(t *testing.T) {
	for _, a := range assignors {
		for seed := range uint64(8) {
			t.Run(fmt.Sprintf("%s/seed=%d", a.Name(), seed), func(t *testing.T) {
				s := newSimulation(t, seed, a)
				for range 400 {
					s.step()
					s.check()
				}
				s.converge()
			})
		}
	}
}

// newSimulation returns a simulation of up to three topics and two groups.
func newSimulation(t *testing.T, seed uint64, a Assignor) *simulation {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	counts := map[string]int{}
	s := &simulation{t: t, rng: rng, groups: []string{"g", "h"}[:1+rng.IntN(2)]}
	for i := range 1 + rng.IntN(3) {
		topic := fmt.Sprintf("t%d", i)
		s.topics = append(s.topics, topic)
		counts[topic] = 1 + rng.IntN(12)
	}
	s.topics = append(s.topics, "missing") // subscribed to, never created
	s.f = newFixture(counts, a)
	return s
}

// subscription draws a random non-empty set of topics.
func (s *simulation) subscription() []string {
	var out []string
	for len(out) == 0 {
		for _, topic := range s.topics {
			if s.rng.IntN(2) == 0 {
				out = append(out, topic)
			}
		}
	}
	return out
}

// live returns the consumers that believe they are members.
func (s *simulation) live() []*consumer {
	var out []*consumer
	for _, c := range s.consumers {
		if !c.fenced {
			out = append(out, c)
		}
	}
	return out
}

// step does one random thing.
func (s *simulation) step() {
	t, f := s.t, s.f
	live := s.live()
	var c *consumer
	if len(live) > 0 {
		c = live[s.rng.IntN(len(live))]
	}
	switch op := s.rng.IntN(100); {
	case op < 10 || c == nil:
		if len(live) >= 8 {
			return
		}
		group := s.groups[s.rng.IntN(len(s.groups))]
		ref := f.join(t, group, s.subscription()...)
		s.consumers = append(s.consumers, &consumer{group: group, ref: ref, owned: map[TopicPartition]struct{}{}})
	case op < 13:
		s.commit(c, slices.Collect(maps.Keys(c.owned)))
		s.result(c, f.Leave(c.group, c.ref.MemberID))
		c.fenced = true
	case op < 50:
		res, err := f.Sync(c.group, c.ref.MemberID)
		if s.result(c, err) {
			return
		}
		for _, p := range res.Assign {
			_, dup := c.owned[p]
			require.False(t, dup, "%s assigned twice to %s", p, c.ref.MemberID)
			c.owned[p] = struct{}{}
		}
		require.Equal(t, sortedPartitions(c.owned), res.Owned, "consumer %s", c.ref.MemberID)
		c.ref.Generation, c.revoke = res.Generation, res.Revoke
	case op < 70:
		// Revoke what it was told, or only part of it.
		parts := c.revoke[:s.rng.IntN(len(c.revoke)+1)]
		s.commit(c, parts)
		if s.result(c, f.Revoked(c.group, c.ref.MemberID, parts)) {
			return
		}
		for _, p := range parts {
			delete(c.owned, p)
		}
		c.revoke = c.revoke[len(parts):]
	case op < 85:
		parts := slices.Collect(maps.Keys(c.owned))
		s.commit(c, parts[:s.rng.IntN(len(parts)+1)])
	case op < 88:
		s.result(c, f.Subscribe(c.group, c.ref.MemberID, s.subscription()))
	case op < 90:
		topic := s.topics[s.rng.IntN(len(s.topics)-1)]
		f.topics.set(topic, f.topics.Partitions(topic)+1)
	case op < 99:
		f.clock.Advance(time.Duration(s.rng.IntN(3000)) * time.Millisecond)
	default:
		f.clock.Advance(DefaultSessionTimeout * 2 / 3)
	}
}

// commit commits new offsets for parts as c. A consumer that believes it
// owns them may only be refused because it was fenced.
func (s *simulation) commit(c *consumer, parts []TopicPartition) {
	s.offset++
	err := commitAll(s.f.Coordinator, c.group, c.ref, parts, s.offset)
	if s.result(c, err) {
		return
	}
	for _, p := range parts {
		got, ok := s.f.Committed(c.group, p.Topic, p.Partition)
		require.True(s.t, ok)
		require.Equal(s.t, s.offset, got.Offset)
	}
}

// result checks the error of a call by c: nil, or ErrFenced if the
// Coordinator evicted it. It reports whether c learned it was fenced, in
// which case it drops everything.
func (s *simulation) result(c *consumer, err error) bool {
	if err == nil {
		return false
	}
	require.ErrorIs(s.t, err, ErrFenced, "consumer %s", c.ref.MemberID)
	for _, m := range s.f.Members(c.group) {
		require.NotEqual(s.t, c.ref.MemberID, m.ID, "fenced but still a member")
	}
	c.fenced = true
	clear(c.owned)
	return true
}

// check verifies the invariants: the Coordinator's ownership is
// exclusive, and every consumer that is still a member believes it owns
// exactly what the Coordinator says, so no two members ever fetch the same
// partition. (An evicted consumer that has not called in yet is a zombie:
// its beliefs are stale, and the check that its commits are fenced is in
// result.)
func (s *simulation) check() {
	for _, group := range s.groups {
		requireOwnersDisjoint(s.t, s.f.Coordinator, group)
		owned := map[string][]TopicPartition{}
		for _, m := range s.f.Members(group) {
			owned[m.ID] = m.Owned
		}
		for _, c := range s.consumers {
			if want, member := owned[c.ref.MemberID]; member && c.group == group {
				require.False(s.t, c.fenced)
				require.Equal(s.t, want, sortedPartitions(c.owned), "consumer %s", c.ref.MemberID)
			}
		}
	}
}

// converge stops changing the groups and lets the members run the
// protocol: every group must reach its target within a few rounds.
func (s *simulation) converge() {
	for _, c := range s.live() {
		if _, err := s.f.Sync(c.group, c.ref.MemberID); errors.Is(err, ErrFenced) {
			c.fenced = true
		}
	}
	for _, group := range s.groups {
		s.f.settle(s.t, group)
		requireOwnersDisjoint(s.t, s.f.Coordinator, group)
		requireConverged(s.t, s.f, group)
	}
}
