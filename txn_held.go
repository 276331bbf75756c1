package strata

import "sync"

// heldOffsets counts, per group and partition, the open transactions that
// hold an offset of the group for the partition (Txn.addOffsets), from
// the offset's addition until its transaction has ended: committed (the
// offset then the group's), aborted or fenced. Its lock is taken last.
type heldOffsets struct {
	mu sync.Mutex
	n  map[string]map[TopicPartition]int
}

// add counts one more transaction holding groupName's offset of tp.
func (h *heldOffsets) add(groupName string, tp TopicPartition) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n = map[string]map[TopicPartition]int{}
	}
	g := h.n[groupName]
	if g == nil {
		g = map[TopicPartition]int{}
		h.n[groupName] = g
	}
	g[tp]++
}

// release counts out a transaction that ended holding offsets, as
// Txn.addOffsets counted them in.
func (h *heldOffsets) release(offsets map[string]map[TopicPartition]OffsetAndMetadata) {
	if len(offsets) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for groupName, offs := range offsets {
		g := h.n[groupName]
		for tp := range offs {
			if g[tp]--; g[tp] <= 0 {
				delete(g, tp)
			}
		}
		if len(g) == 0 {
			delete(h.n, groupName)
		}
	}
}

// has reports whether an open transaction holds groupName's offset of tp.
func (h *heldOffsets) has(groupName string, tp TopicPartition) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[groupName][tp] > 0
}
