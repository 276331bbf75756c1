package group

import "slices"

// Sticky returns Kafka's (eager) StickyAssignor ("sticky"). It first makes
// the assignment as balanced as the subscriptions allow and then, among
// the balanced assignments, keeps as many previously owned partitions
// (Member.Owned) as possible, so that a rebalance moves only the
// partitions that must move.
//
// Balanced means that no other valid assignment has a smaller sum of
// squared per-member counts. When all members subscribe to the same
// topics, this is Kafka's rule that counts differ by at most one (quotas
// floor(P/C) and ceil(P/C)). With unequal subscriptions it is the most even
// spread the subscriptions permit: it also minimises the largest count and
// maximises the smallest, and no partition can move from a member to one
// holding at least two fewer that subscribes to its topic.
//
// Sticky then keeps the largest number of owned partitions any balanced
// assignment can keep. After a member leaves, the others therefore keep
// everything they owned whenever balance allows, and only the leaver's
// partitions move; after a member joins, each of the others gives up only
// what balance requires. Fed its own output as Owned (at a later
// generation), Sticky returns the same assignment.
//
// Owned lists are read as claims. A claim is void if the topic no longer
// exists or is no longer subscribed to by the claimant, or if the partition
// number is out of range. Among the remaining claims on a partition, the
// one with the highest Generation wins; if two members claim it at that
// same generation, both claims are void (as in Kafka, which cannot tell
// which of them is right). A member that must give up some of its owned
// partitions of a topic keeps the lowest-numbered ones. Partitions that
// change hands go to the members that need them in member order, lowest
// partition numbers first.
func Sticky() Assignor { return stickyAssignor{} }

// stickyAssignor implements Sticky.
type stickyAssignor struct{}

// Name returns "sticky".
func (stickyAssignor) Name() string { return "sticky" }

// Assign implements Assignor.
func (stickyAssignor) Assign(members []Member, partitions map[string]int) Assignment {
	p := newPlan(members, partitions)
	owners := p.previousOwners()
	owned := make([][]int, len(p.members))
	for m := range owned {
		owned[m] = make([]int, len(p.topics))
	}
	for t := range owners {
		for _, m := range owners[t] {
			if m >= 0 {
				owned[m][t]++
			}
		}
	}
	counts := balance(p, owned)
	return p.result(p.distribute(owners, counts))
}

// claim is the strongest claim on one partition seen so far.
type claim struct {
	member     int  // index in plan.members; -1 if unclaimed
	generation int  // Generation of the claim
	contested  bool // another member claims it at the same generation
}

// previousOwners resolves the members' Owned claims. It returns, for each
// planned topic and partition, the index of the member that keeps its
// claim, or -1.
func (p *plan) previousOwners() [][]int {
	claims := make([][]claim, len(p.topics))
	for t, n := range p.counts {
		claims[t] = make([]claim, n)
		for q := range claims[t] {
			claims[t][q].member = -1
		}
	}
	for m, mem := range p.members {
		for _, tp := range mem.Owned {
			t, ok := p.index[tp.Topic]
			if !ok || !p.subs[m][t] || tp.Partition < 0 || tp.Partition >= p.counts[t] {
				continue
			}
			c := &claims[t][tp.Partition]
			switch {
			case c.member < 0 || mem.Generation > c.generation:
				*c = claim{member: m, generation: mem.Generation}
			case c.member == m: // listed twice
			case mem.Generation == c.generation:
				c.contested = true
			}
		}
	}
	owners := make([][]int, len(p.topics))
	for t := range claims {
		owners[t] = make([]int, len(claims[t]))
		for q, c := range claims[t] {
			owners[t][q] = c.member
			if c.contested {
				owners[t][q] = -1
			}
		}
	}
	return owners
}

// distribute turns per-member, per-topic counts into partitions: each
// member keeps its lowest-numbered owned partitions up to its count, and
// the remaining partitions of the topic go, in ascending order, to the
// members still short, in member order.
func (p *plan) distribute(owners [][]int, counts [][]int) [][]TopicPartition {
	lists := make([][]TopicPartition, len(p.members))
	kept := make([]int, len(p.members))
	var free []int
	for t, topic := range p.topics {
		clear(kept)
		free = free[:0]
		for q, m := range owners[t] {
			if m >= 0 && kept[m] < counts[m][t] {
				kept[m]++
				lists[m] = append(lists[m], TopicPartition{Topic: topic, Partition: q})
				continue
			}
			free = append(free, q)
		}
		next := 0
		for m := range p.members {
			for range counts[m][t] - kept[m] {
				lists[m] = append(lists[m], TopicPartition{Topic: topic, Partition: free[next]})
				next++
			}
		}
	}
	for _, l := range lists {
		slices.SortFunc(l, TopicPartition.Compare)
	}
	return lists
}
