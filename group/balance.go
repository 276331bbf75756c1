package group

import "math"

// balance decides how many partitions of each topic each member gets for
// Sticky: counts[m][t] for plan member m and planned topic t. It solves a
// min-cost flow exactly, so the result is the most balanced assignment
// and, among those, the one keeping the most owned partitions.
//
// The network:
//
//	source ──(count t, 0)──▶ topic t ──(owned m,t, −1)──▶ member m ──(unit k: big·(2k−1))──▶ sink
//	                                 └─(count t, 0)─────▶
//
// Partitions of a topic are interchangeable except for who owned them, so
// the flow only counts: x(m,t) partitions of t go to m, of which
// min(x(m,t), owned(m,t)) can be kept. The k-th unit into a member costs
// big·(2k−1), so a member holding c partitions costs big·c²; with big
// larger than any number of kept partitions, minimising the total cost
// minimises Σc² first (balance) and maximises the kept partitions second
// (each kept one earns −1).
//
// It runs the primal-dual method: Dijkstra on reduced costs (potentials
// keep them non-negative), then a blocking flow over the arcs of zero
// reduced cost, until every partition is placed. Each phase gives every
// member at most one more partition, so a group of C members and P
// partitions needs about P/C phases when subscriptions are equal.
func balance(p *plan, owned [][]int) [][]int {
	counts := make([][]int, len(p.members))
	for m := range counts {
		counts[m] = make([]int, len(p.topics))
	}
	total := 0
	for _, c := range p.counts {
		total += c
	}
	if total == 0 {
		return counts
	}

	topicNode := func(t int) int { return 1 + t }
	memberNode := func(m int) int { return 1 + len(p.topics) + m }
	n := newNetwork(2+len(p.topics)+len(p.members), int64(total)+1)
	for t, c := range p.counts {
		n.addArc(0, topicNode(t), c, 0)
	}
	// pairArcs records the arcs from a topic to a member, to read the flow.
	type pairArcs struct{ m, t, kept, free int }
	var pairs []pairArcs
	minPi := int64(0)
	for m := range p.members {
		subscribed := false
		for t := range p.topics {
			if !p.subs[m][t] {
				continue
			}
			if !subscribed {
				// The sink arc first, so that a search from a member
				// tries the sink before detours through other topics.
				subscribed = true
				n.addArc(memberNode(m), n.sink, total, n.big)
			}
			pa := pairArcs{m: m, t: t, kept: -1}
			if owned[m][t] > 0 {
				pa.kept = n.addArc(topicNode(t), memberNode(m), owned[m][t], -1)
				n.pi[memberNode(m)] = -1
				minPi = -1
			}
			pa.free = n.addArc(topicNode(t), memberNode(m), p.counts[t], 0)
			pairs = append(pairs, pa)
		}
	}
	// Shortest distances in the empty network (a DAG) are feasible
	// potentials: source and topics 0, a member −1 if it can keep
	// something, the sink big plus the smallest member distance.
	n.pi[n.sink] = n.big + minPi

	n.run()

	for _, pa := range pairs {
		x := n.flow(pa.free)
		if pa.kept >= 0 {
			x += n.flow(pa.kept)
		}
		counts[pa.m][pa.t] = x
	}
	return counts
}

// arc is one arc of the residual network; arcs come in pairs, an arc and
// its reverse (with capacity 0 and negated cost at the start).
type arc struct {
	to   int
	rev  int   // index of the reverse arc
	cap  int   // residual capacity
	cost int64 // for a member's sink arc: the cost of the next unit
}

// network is a min-cost flow network from node 0 (the source) to sink,
// specialised for balance: arcs into the sink are convex (each unit costs
// 2·big more than the one before) and carry one unit per augmentation.
type network struct {
	adj  [][]int // arc indices leaving each node
	arcs []arc
	sink int
	big  int64

	pi    []int64 // node potentials: reduced cost = cost + pi[u] − pi[v] ≥ 0
	dist  []int64
	level []int
	iter  []int
	queue []int
	heap  distHeap
}

// newNetwork returns a network of nodes nodes with no arcs; the last node
// is the sink.
func newNetwork(nodes int, big int64) *network {
	return &network{
		adj:   make([][]int, nodes),
		sink:  nodes - 1,
		big:   big,
		pi:    make([]int64, nodes),
		dist:  make([]int64, nodes),
		level: make([]int, nodes),
		iter:  make([]int, nodes),
	}
}

// addArc adds an arc from u to v and its reverse, returning the arc's
// index.
func (n *network) addArc(u, v, capacity int, cost int64) int {
	id := len(n.arcs)
	n.arcs = append(n.arcs,
		arc{to: v, rev: id + 1, cap: capacity, cost: cost},
		arc{to: u, rev: id, cap: 0, cost: -cost})
	n.adj[u] = append(n.adj[u], id)
	n.adj[v] = append(n.adj[v], id+1)
	return id
}

// flow returns the flow on arc id: the residual capacity of its reverse.
func (n *network) flow(id int) int { return n.arcs[n.arcs[id].rev].cap }

// reduced returns the reduced cost of arc a leaving u.
func (n *network) reduced(u int, a *arc) int64 { return a.cost + n.pi[u] - n.pi[a.to] }

// run sends the maximum flow from source to sink at minimum cost.
func (n *network) run() {
	for n.shortestPaths() {
		for n.levels() {
			clear(n.iter)
			for n.augment(0) {
			}
		}
	}
}

// shortestPaths runs Dijkstra from the source on reduced costs and moves
// the potentials by the distances (capped at the sink's, which keeps every
// reduced cost non-negative and lets the search stop at the sink). It
// reports whether the sink is reachable.
func (n *network) shortestPaths() bool {
	for v := range n.dist {
		n.dist[v] = math.MaxInt64
	}
	n.dist[0] = 0
	n.heap = append(n.heap[:0], distItem{0, 0})
	for len(n.heap) > 0 {
		it := n.heap.pop()
		u := it.node
		if it.dist > n.dist[u] {
			continue
		}
		if u == n.sink {
			break
		}
		for _, id := range n.adj[u] {
			a := &n.arcs[id]
			if a.cap == 0 {
				continue
			}
			if d := it.dist + n.reduced(u, a); d < n.dist[a.to] {
				n.dist[a.to] = d
				n.heap.push(distItem{d, a.to})
			}
		}
	}
	limit := n.dist[n.sink]
	if limit == math.MaxInt64 {
		return false
	}
	for v, d := range n.dist {
		n.pi[v] += min(d, limit)
	}
	return true
}

// admissible reports whether arc a leaving u lies on a shortest path: it
// has residual capacity and zero reduced cost.
func (n *network) admissible(u int, a *arc) bool {
	return a.cap > 0 && n.reduced(u, a) == 0
}

// levels numbers the nodes by breadth-first distance from the source over
// admissible arcs and reports whether the sink is reached.
func (n *network) levels() bool {
	for v := range n.level {
		n.level[v] = -1
	}
	n.level[0] = 0
	n.queue = append(n.queue[:0], 0)
	for i := 0; i < len(n.queue); i++ {
		u := n.queue[i]
		if u == n.sink {
			continue
		}
		for _, id := range n.adj[u] {
			a := &n.arcs[id]
			if n.level[a.to] < 0 && n.admissible(u, a) {
				n.level[a.to] = n.level[u] + 1
				n.queue = append(n.queue, a.to)
			}
		}
	}
	return n.level[n.sink] >= 0
}

// augment pushes one unit from u to the sink along admissible arcs that
// climb one level at a time, and reports whether it found a path. The
// per-node iterators skip arcs already found to lead nowhere.
func (n *network) augment(u int) bool {
	if u == n.sink {
		return true
	}
	for ; n.iter[u] < len(n.adj[u]); n.iter[u]++ {
		id := n.adj[u][n.iter[u]]
		a := &n.arcs[id]
		if n.level[a.to] != n.level[u]+1 || !n.admissible(u, a) || !n.augment(a.to) {
			continue
		}
		a.cap--
		n.arcs[a.rev].cap++
		if a.to == n.sink {
			// The member's next unit costs more; the reverse arc out of
			// the sink is never searched, so its cost may stay stale.
			a.cost += 2 * n.big
		}
		return true
	}
	return false
}

// distItem is a tentative distance in Dijkstra's queue.
type distItem struct {
	dist int64
	node int
}

// distHeap is a binary min-heap of distItems ordered by dist, then node
// (so that the search order, and with it the result, is deterministic).
type distHeap []distItem

// less orders the heap.
func (h distHeap) less(i, j int) bool {
	if h[i].dist != h[j].dist {
		return h[i].dist < h[j].dist
	}
	return h[i].node < h[j].node
}

// push adds it to the heap.
func (h *distHeap) push(it distItem) {
	*h = append(*h, it)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s.less(i, parent) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

// pop removes and returns the smallest item.
func (h *distHeap) pop() distItem {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		smallest, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && s.less(l, smallest) {
			smallest = l
		}
		if r < len(s) && s.less(r, smallest) {
			smallest = r
		}
		if smallest == i {
			break
		}
		s[i], s[smallest] = s[smallest], s[i]
		i = smallest
	}
	*h = s
	return top
}
