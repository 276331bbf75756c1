package group

// RoundRobin returns Kafka's RoundRobinAssignor ("roundrobin"). All
// partitions of the subscribed topics are laid out in (topic, partition)
// order and dealt one at a time to the members, in member order, going
// round in a circle. A member not subscribed to a partition's topic is
// skipped, and the deal continues from the member after the one that took
// the partition.
//
// With two members C0, C1 and two topics t0, t1 of three partitions each,
// C0 gets [t0-0 t0-2 t1-1] and C1 gets [t0-1 t1-0 t1-2]. When all members
// subscribe to the same topics, counts differ by at most one. With unequal
// subscriptions the skip rule can leave the assignment lopsided: members
// C0 (t0), C1 (t0, t1) and C2 (t0, t1, t2) over topics of 1, 2 and 3
// partitions get [t0-0], [t1-0] and [t1-1 t2-0 t2-1 t2-2]. It ignores
// Member.Owned.
func RoundRobin() Assignor { return roundRobinAssignor{} }

// roundRobinAssignor implements RoundRobin.
type roundRobinAssignor struct{}

// Name returns "roundrobin".
func (roundRobinAssignor) Name() string { return "roundrobin" }

// Assign implements Assignor.
func (roundRobinAssignor) Assign(members []Member, partitions map[string]int) Assignment {
	p := newPlan(members, partitions)
	owner := p.owners()
	next := 0 // the member the deal is at
	for t := range p.topics {
		for partition := range p.counts[t] {
			// Every planned topic has a subscriber, so this stops within
			// one turn of the circle.
			for !p.subs[next][t] {
				next = (next + 1) % len(p.members)
			}
			owner[t][partition] = next
			next = (next + 1) % len(p.members)
		}
	}
	return p.result(owner)
}
