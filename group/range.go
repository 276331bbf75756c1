package group

// Range returns Kafka's RangeAssignor ("range"). Each topic is assigned on
// its own: the C members subscribed to a topic of P partitions are taken in
// member order, and each receives a contiguous run of P/C partitions, the
// first P%C of them one more. With two members C0, C1 and two topics t0, t1
// of three partitions each, C0 gets [t0-0 t0-1 t1-0 t1-1] and C1 gets
// [t0-2 t1-2].
//
// Because every topic favours the same first members, Range can leave
// counts uneven across topics (4 against 2 above); it keeps partitions of
// the same number on the same member, which is what joins of co-partitioned
// topics want. It ignores Member.Owned.
func Range() Assignor { return rangeAssignor{} }

// rangeAssignor implements Range.
type rangeAssignor struct{}

// Name returns "range".
func (rangeAssignor) Name() string { return "range" }

// Assign implements Assignor.
func (rangeAssignor) Assign(members []Member, partitions map[string]int) Assignment {
	p := newPlan(members, partitions)
	owner := p.owners()
	subscribed := make([]int, 0, len(p.members))
	for t := range p.topics {
		subscribed = subscribed[:0]
		for m := range p.members {
			if p.subs[m][t] {
				subscribed = append(subscribed, m)
			}
		}
		quota, extra := p.counts[t]/len(subscribed), p.counts[t]%len(subscribed)
		next := 0
		for i, m := range subscribed {
			n := quota
			if i < extra {
				n++
			}
			for range n {
				owner[t][next] = m
				next++
			}
		}
	}
	return p.result(owner)
}
