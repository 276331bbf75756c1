package group

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
// same generation, the partition counts as unowned (as Kafka's assignor
// does when subscriptions are equal: neither claim can be trusted). A
// member that must give up some of its owned partitions of a topic keeps
// the lowest-numbered ones. Partitions that change hands or had no owner
// go to the members short of their count in member order, lowest
// partition numbers first.
func Sticky() Assignor { return stickyAssignor{} }

// stickyAssignor implements Sticky.
type stickyAssignor struct{}

// Name returns "sticky".
func (stickyAssignor) Name() string { return "sticky" }

// Assign implements Assignor.
func (stickyAssignor) Assign(members []Member, partitions map[string]int) Assignment {
	p := newPlan(members, partitions)
	previous := p.previousOwners()
	owned := make([][]int, len(p.members))
	flat := make([]int, len(p.members)*len(p.topics))
	for m := range owned {
		owned[m], flat = flat[:len(p.topics):len(p.topics)], flat[len(p.topics):]
	}
	for t := range previous {
		for _, m := range previous[t] {
			if m >= 0 {
				owned[m][t]++
			}
		}
	}
	return p.result(p.distribute(previous, balance(p, owned)))
}

// previousOwners resolves the members' Owned claims. It returns, for each
// planned topic and partition, the index of the member whose claim stands,
// or -1.
func (p *plan) previousOwners() [][]int {
	owner := p.owners()
	generation := make([][]int, len(p.topics))
	contested := make([][]bool, len(p.topics))
	for t, n := range p.counts {
		generation[t] = make([]int, n)
		contested[t] = make([]bool, n)
	}
	for m, mem := range p.members {
		for _, tp := range mem.Owned {
			t, ok := p.index[tp.Topic]
			if !ok || !p.subs[m][t] || tp.Partition < 0 || tp.Partition >= p.counts[t] {
				continue
			}
			q := tp.Partition
			switch {
			case owner[t][q] < 0 || mem.Generation > generation[t][q]:
				owner[t][q], generation[t][q], contested[t][q] = m, mem.Generation, false
			case owner[t][q] == m: // listed twice
			case mem.Generation == generation[t][q]:
				contested[t][q] = true
			}
		}
	}
	for t := range owner {
		for q := range owner[t] {
			if contested[t][q] {
				owner[t][q] = -1
			}
		}
	}
	return owner
}

// distribute turns per-member, per-topic counts into the owner of each
// partition: each member keeps its lowest-numbered previous partitions up
// to its count, and the remaining partitions of the topic go, in ascending
// order, to the members still short, in member order.
func (p *plan) distribute(previous [][]int, counts [][]int) [][]int {
	owner := p.owners()
	kept := make([]int, len(p.members))
	for t := range p.topics {
		clear(kept)
		for q, m := range previous[t] {
			if m >= 0 && kept[m] < counts[m][t] {
				kept[m]++
				owner[t][q] = m
			}
		}
		q := 0
		for m := range p.members {
			for range counts[m][t] - kept[m] {
				for owner[t][q] >= 0 {
					q++
				}
				owner[t][q] = m
				q++
			}
		}
	}
	return owner
}
