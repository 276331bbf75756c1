package group

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// scenario is one randomly generated input.
type scenario struct {
	members    []Member
	partitions map[string]int
}

// shape bounds the random scenarios.
type shape struct {
	maxMembers, maxTopics, maxPartitions int
	equal                                bool // every member subscribes to the same topics
}

// small is the size of the property tests' groups: 1..10 members, 1..5
// topics of 1..20 partitions.
var small = shape{maxMembers: 10, maxTopics: 5, maxPartitions: 20}

// randomScenario draws members (some static), topics and subscriptions.
// Subscriptions are random non-empty subsets, now and then empty or naming
// a topic that does not exist.
func randomScenario(rng *rand.Rand, s shape) scenario {
	sc := scenario{partitions: map[string]int{}}
	topics := make([]string, 1+rng.IntN(s.maxTopics))
	for i := range topics {
		topics[i] = fmt.Sprintf("t%d", i)
		sc.partitions[topics[i]] = 1 + rng.IntN(s.maxPartitions)
	}
	subset := func() []string {
		var sub []string
		for len(sub) == 0 {
			for _, topic := range topics {
				if rng.IntN(2) == 0 {
					sub = append(sub, topic)
				}
			}
		}
		return sub
	}
	shared := subset()
	ids := rng.Perm(100)
	for i := range 1 + rng.IntN(s.maxMembers) {
		m := Member{ID: fmt.Sprintf("m%02d", ids[i])}
		if rng.IntN(4) == 0 {
			m.InstanceID = fmt.Sprintf("static-%d", rng.IntN(1000))
		}
		switch {
		case s.equal:
			m.Topics = slices.Clone(shared)
		case rng.IntN(20) == 0:
			m.Topics = nil
		case rng.IntN(10) == 0:
			m.Topics = append(subset(), "gone")
		default:
			m.Topics = subset()
		}
		sc.members = append(sc.members, m)
	}
	return sc
}

// randomOwned gives each member a random set of claims at a random
// generation in 1..3, including claims on partitions that do not exist.
func randomOwned(rng *rand.Rand, sc scenario) []Member {
	members := cloneMembers(sc.members)
	for i := range members {
		members[i].Generation = 1 + rng.IntN(3)
		for topic, n := range sc.partitions {
			for q := range n + 1 { // q == n does not exist
				if rng.IntN(3) == 0 {
					members[i].Owned = append(members[i].Owned, TopicPartition{topic, q})
				}
			}
		}
		if rng.IntN(5) == 0 {
			members[i].Owned = append(members[i].Owned, TopicPartition{"gone", 0})
		}
		rng.Shuffle(len(members[i].Owned), func(a, b int) {
			members[i].Owned[a], members[i].Owned[b] = members[i].Owned[b], members[i].Owned[a]
		})
	}
	return members
}

// totalPartitions counts the partitions of topics someone subscribes to.
func totalPartitions(sc scenario) int {
	total := 0
	for topic, n := range sc.partitions {
		if slices.ContainsFunc(sc.members, func(m Member) bool { return subscribed(m, topic) }) {
			total += n
		}
	}
	return total
}

// cases runs f on n scenarios drawn from a generator with a fixed seed.
func cases(t *testing.T, seed uint64, n int, s shape, f func(t *testing.T, rng *rand.Rand, sc scenario)) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	for i := range n {
		sc := randomScenario(rng, s)
		t.Run(fmt.Sprintf("case=%d", i), func(t *testing.T) { f(t, rng, sc) })
	}
}

func TestPropertyValid(t *testing.T) {
	for _, a := range assignors {
		t.Run(a.Name(), func(t *testing.T) {
			cases(t, 1, 300, small, func(t *testing.T, rng *rand.Rand, sc scenario) {
				members := randomOwned(rng, sc)
				got := a.Assign(members, sc.partitions)
				requireValid(t, members, sc.partitions, got)

				shuffled := cloneMembers(members)
				rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
				require.Equal(t, got, a.Assign(shuffled, sc.partitions), "member order leaked into the result")
			})
		})
	}
}

func TestPropertyEqualSubscriptionsBalanced(t *testing.T) {
	equal := small
	equal.equal = true
	for _, a := range []Assignor{RoundRobin(), Sticky()} {
		t.Run(a.Name(), func(t *testing.T) {
			cases(t, 2, 300, equal, func(t *testing.T, rng *rand.Rand, sc scenario) {
				members := randomOwned(rng, sc)
				got := a.Assign(members, sc.partitions)
				requireValid(t, members, sc.partitions, got)
				require.LessOrEqual(t, spread(counts(members, got)), 1, "counts %v", counts(members, got))
			})
		})
	}
}

// requireStickyOptimal checks conditions every optimal Sticky result
// meets, given members' resolved claims: no partition could move to a
// member holding two fewer (balance), and no partition a member lost could
// come back to it without hurting balance, alone or by swapping with a
// partition the other member lost to it.
func requireStickyOptimal(t *testing.T, members []Member, partitions map[string]int, a Assignment) {
	t.Helper()
	owner := resolvedOwners(members, partitions)
	holder := map[TopicPartition]string{}
	count := map[string]int{}
	byID := map[string]Member{}
	for _, m := range members {
		byID[m.ID] = m
		count[m.ID] = len(a[m.ID])
		for _, tp := range a[m.ID] {
			holder[tp] = m.ID
		}
	}
	for tp, h := range holder {
		for _, m := range members {
			if m.ID != h && subscribed(m, tp.Topic) {
				require.Less(t, count[h]-count[m.ID], 2,
					"%s could move from %s (%d) to %s (%d)", tp, h, count[h], m.ID, count[m.ID])
			}
		}
		prev, ok := owner[tp]
		if !ok || prev == h {
			continue
		}
		require.GreaterOrEqual(t, count[prev], count[h],
			"%s could go back from %s (%d) to its owner %s (%d)", tp, h, count[h], prev, count[prev])
		// A swap: h lost some partition to prev as well.
		for _, back := range a[prev] {
			if owner[back] == h {
				t.Fatalf("%s (owned by %s) and %s (owned by %s) could swap back", tp, prev, back, h)
			}
		}
	}
}

// resolvedOwners applies Sticky's claim rules independently: valid claims
// only, the highest generation wins, a tie at the top voids the claim.
func resolvedOwners(members []Member, partitions map[string]int) map[TopicPartition]string {
	type best struct {
		gen int
		ids []string
	}
	claims := map[TopicPartition]*best{}
	for _, m := range members {
		for _, tp := range m.Owned {
			if !subscribed(m, tp.Topic) || tp.Partition < 0 || tp.Partition >= partitions[tp.Topic] {
				continue
			}
			b := claims[tp]
			switch {
			case b == nil || m.Generation > b.gen:
				claims[tp] = &best{gen: m.Generation, ids: []string{m.ID}}
			case m.Generation == b.gen && !slices.Contains(b.ids, m.ID):
				b.ids = append(b.ids, m.ID)
			}
		}
	}
	owners := map[TopicPartition]string{}
	for tp, b := range claims {
		if len(b.ids) == 1 {
			owners[tp] = b.ids[0]
		}
	}
	return owners
}

func TestPropertyStickyOptimalConditions(t *testing.T) {
	cases(t, 3, 500, small, func(t *testing.T, rng *rand.Rand, sc scenario) {
		members := randomOwned(rng, sc)
		got := Sticky().Assign(members, sc.partitions)
		requireValid(t, members, sc.partitions, got)
		requireStickyOptimal(t, members, sc.partitions, got)
	})
}

// TestPropertyStickyMatchesBruteForce compares Sticky with an exhaustive
// search on small groups: the same sum of squared counts (balance) and,
// among the assignments that reach it, the most partitions kept.
func TestPropertyStickyMatchesBruteForce(t *testing.T) {
	tiny := shape{maxMembers: 4, maxTopics: 3, maxPartitions: 3}
	n := 0
	rng := rand.New(rand.NewPCG(4, 0x5eed))
	for n < 400 {
		sc := randomScenario(rng, tiny)
		if totalPartitions(sc) > 7 {
			continue
		}
		n++
		members := randomOwned(rng, sc)
		t.Run(fmt.Sprintf("case=%d", n), func(t *testing.T) {
			got := Sticky().Assign(members, sc.partitions)
			requireValid(t, members, sc.partitions, got)
			owners := resolvedOwners(members, sc.partitions)
			wantSq, wantKept := bruteForce(members, sc.partitions, owners)
			sq, k := score(members, got, owners)
			require.Equal(t, wantSq, sq, "sum of squares")
			require.Equal(t, wantKept, k, "kept partitions")
		})
	}
}

// score returns the sum of squared counts and the partitions kept by
// their resolved owner.
func score(members []Member, a Assignment, owners map[TopicPartition]string) (sq, kept int) {
	for _, m := range members {
		sq += len(a[m.ID]) * len(a[m.ID])
		for _, tp := range a[m.ID] {
			if owners[tp] == m.ID {
				kept++
			}
		}
	}
	return sq, kept
}

// bruteForce tries every valid assignment and returns the smallest sum of
// squared counts and the most kept partitions among those reaching it.
func bruteForce(members []Member, partitions map[string]int, owners map[TopicPartition]string) (bestSq, bestKept int) {
	var all []TopicPartition
	for topic, n := range partitions {
		for q := range n {
			all = append(all, TopicPartition{topic, q})
		}
	}
	bestSq, bestKept = -1, -1
	cnt := make([]int, len(members))
	var walk func(i, kept int)
	walk = func(i, kept int) {
		if i == len(all) {
			sq := 0
			for _, c := range cnt {
				sq += c * c
			}
			if bestSq < 0 || sq < bestSq || sq == bestSq && kept > bestKept {
				bestSq, bestKept = sq, kept
			}
			return
		}
		tp := all[i]
		anyone := false
		for m := range members {
			if !subscribed(members[m], tp.Topic) {
				continue
			}
			anyone = true
			k := kept
			if owners[tp] == members[m].ID {
				k++
			}
			cnt[m]++
			walk(i+1, k)
			cnt[m]--
		}
		if !anyone {
			walk(i+1, kept)
		}
	}
	walk(0, 0)
	return bestSq, bestKept
}

func TestPropertyStickyStable(t *testing.T) {
	cases(t, 5, 300, small, func(t *testing.T, rng *rand.Rand, sc scenario) {
		members := randomOwned(rng, sc)
		first := Sticky().Assign(members, sc.partitions)
		again := Sticky().Assign(withOwned(members, first, 4), sc.partitions)
		require.Equal(t, first, again)
	})
}

func TestPropertyStickyMemberLeaves(t *testing.T) {
	for _, s := range []shape{small, {maxMembers: 10, maxTopics: 5, maxPartitions: 20, equal: true}} {
		t.Run(fmt.Sprintf("equal=%v", s.equal), func(t *testing.T) {
			cases(t, 6, 300, s, func(t *testing.T, rng *rand.Rand, sc scenario) {
				if len(sc.members) < 2 {
					return
				}
				before := Sticky().Assign(sc.members, sc.partitions)
				members := withOwned(sc.members, before, 1)
				gone := rng.IntN(len(members))
				members = slices.Delete(members, gone, gone+1)
				after := Sticky().Assign(members, sc.partitions)
				requireValid(t, members, sc.partitions, after)
				requireStickyOptimal(t, members, sc.partitions, after)
				if !s.equal {
					return // balance may take partitions from survivors
				}
				p := totalPartitions(scenario{members: members, partitions: sc.partitions})
				ceil := (p + len(members) - 1) / len(members)
				for _, m := range members {
					if len(m.Owned) <= ceil {
						require.Subset(t, after[m.ID], m.Owned, "%s lost a partition", m.ID)
					}
				}
			})
		})
	}
}

func TestPropertyStickyMemberJoins(t *testing.T) {
	equal := small
	equal.equal = true
	cases(t, 7, 300, equal, func(t *testing.T, rng *rand.Rand, sc scenario) {
		before := Sticky().Assign(sc.members, sc.partitions)
		members := withOwned(sc.members, before, 1)
		members = append(members, Member{ID: "joiner", Topics: slices.Clone(sc.members[0].Topics)})
		after := Sticky().Assign(members, sc.partitions)
		requireValid(t, members, sc.partitions, after)
		require.LessOrEqual(t, spread(counts(members, after)), 1)

		// The best possible: the P%C members that owned most keep up to
		// ceil(P/C), the others up to floor(P/C).
		p, c := totalPartitions(sc), len(members)
		owned := make([]int, c)
		for i, m := range members {
			owned[i] = len(m.Owned)
		}
		slices.Sort(owned)
		slices.Reverse(owned)
		best := 0
		for i, o := range owned {
			quota := p / c
			if i < p%c {
				quota++
			}
			best += min(o, quota)
		}
		k := kept(members, after)
		total := 0
		for _, m := range members {
			require.GreaterOrEqual(t, k[m.ID], min(len(m.Owned), p/c), "%s gave up more than balance requires", m.ID)
			total += k[m.ID]
		}
		require.Equal(t, best, total)
	})
}
