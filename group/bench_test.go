package group

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchGroup returns members subscribed to one topic of p partitions,
// owning what Sticky gave them before the last member joined (so Sticky
// has a real rebalance to do; Range and RoundRobin ignore Owned).
func benchGroup(members, p int) ([]Member, map[string]int) {
	partitions := map[string]int{"t0": p}
	group := make([]Member, members)
	for i := range group {
		group[i] = Member{ID: fmt.Sprintf("member-%04d", i), Topics: []string{"t0"}}
	}
	prev := Sticky().Assign(group[:members-1], partitions)
	return withOwned(group, prev, 1), partitions
}

func BenchmarkAssign(b *testing.B) {
	sizes := []struct{ members, partitions int }{{4, 64}, {100, 1000}}
	for _, a := range assignors {
		for _, s := range sizes {
			members, partitions := benchGroup(s.members, s.partitions)
			b.Run(fmt.Sprintf("%s/members=%d/partitions=%d", a.Name(), s.members, s.partitions), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					a.Assign(members, partitions)
				}
			})
		}
	}
}

// BenchmarkStickyUnequal measures Sticky when subscriptions differ: 100
// members, each subscribed to a random half of 20 topics of 50 partitions,
// rebalancing after a member left.
func BenchmarkStickyUnequal(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	partitions := map[string]int{}
	var topics []string
	for i := range 20 {
		topic := fmt.Sprintf("topic-%02d", i)
		topics = append(topics, topic)
		partitions[topic] = 50
	}
	members := make([]Member, 101)
	for i := range members {
		members[i].ID = fmt.Sprintf("member-%04d", i)
		for _, topic := range topics {
			if rng.IntN(2) == 0 {
				members[i].Topics = append(members[i].Topics, topic)
			}
		}
	}
	prev := Sticky().Assign(members, partitions)
	members = withOwned(members[1:], prev, 1)
	b.ReportAllocs()
	for b.Loop() {
		Sticky().Assign(members, partitions)
	}
}
