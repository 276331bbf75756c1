package compaction

import (
	"cmp"
	"slices"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// txnState follows the transactions of the batches a cleaning traverses,
// in offset order, as Kafka's CleanedTransactionMetadata does
// (core/src/main/scala/kafka/log/LogCleaner.scala): which batches belong
// to an aborted transaction (to drop them and keep their keys out of the
// map), and which markers are still needed.
//
// A transaction is aborted when an entry of the aborted list (the
// partition's .txnindex entries) covers the batch: same producer, the
// batch at or after its first offset and before its marker. Another
// transactional batch is treated as data, committed (below the last stable
// offset every transaction is complete, and the cleaning stops there).
//
// A marker is needed while the data it decides is: an ABORT marker stays
// (with its .txnindex entry, copied to the cleaned segment) while this
// cleaning traversed batches of its transaction, which it dropped — the
// next cleaning finds none and lets the marker go; a COMMIT marker stays
// while this cleaning traversed batches of its transaction. A marker that
// is not needed goes the way of a tombstone: the first cleaning stamps its
// batch with a delete horizon, and a cleaning after the horizon drops it,
// so that a reader that was reading the transaction in the meantime still
// sees how it ended.
type txnState struct {
	aborted   []segment.AbortedTxn // by first offset
	started   int                  // aborted[:started] have begun at the batches traversed
	active    map[int64]*openAbort // per producer, the aborted transaction it is in
	committed map[int64]bool       // producers with a non-aborted transactional batch traversed since their last marker
}

// openAbort is an aborted transaction the cleaning is inside.
type openAbort struct {
	txn  segment.AbortedTxn
	seen bool // a batch of it was traversed (and dropped)
}

func newTxnState(list []segment.AbortedTxn) *txnState {
	slices.SortFunc(list, func(a, b segment.AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	return &txnState{aborted: list, active: map[int64]*openAbort{}, committed: map[int64]bool{}}
}

// withSegmentTxns returns aborted with the .txnindex entries of segs
// that it lacks.
func withSegmentTxns(aborted []segment.AbortedTxn, segs []*segment.Segment) []segment.AbortedTxn {
	have := make(map[int64]bool, len(aborted))
	for _, a := range aborted {
		have[a.LastOffset] = true
	}
	out := slices.Clone(aborted)
	for _, s := range segs {
		for _, a := range s.AbortedTxns() {
			if !have[a.LastOffset] {
				have[a.LastOffset] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// startUpTo marks the aborted transactions that begin at or before offset
// as begun.
func (t *txnState) startUpTo(offset int64) {
	for t.started < len(t.aborted) && t.aborted[t.started].FirstOffset <= offset {
		a := t.aborted[t.started]
		t.started++
		if cur, ok := t.active[a.ProducerID]; ok && cur.txn.LastOffset >= a.FirstOffset {
			continue // its current one has not ended yet (Kafka keeps the first)
		}
		t.active[a.ProducerID] = &openAbort{txn: a}
	}
}

// onBatch takes a data batch and reports whether it belongs to an aborted
// transaction.
func (t *txnState) onBatch(h log.BatchHeader) bool {
	t.startUpTo(h.LastOffset())
	if !h.IsTransactional() || h.ProducerID < 0 {
		return false
	}
	if a, ok := t.active[h.ProducerID]; ok && h.BaseOffset >= a.txn.FirstOffset && h.BaseOffset < a.txn.LastOffset {
		a.seen = true
		return true
	}
	t.committed[h.ProducerID] = true
	return false
}

// onMarker takes a control batch holding a marker of type typ (empty:
// none) and reports whether the marker may go; for an ABORT marker that
// stays, keep is its transaction's .txnindex entry.
func (t *txnState) onMarker(h log.BatchHeader, typ log.ControlType, empty bool) (discard bool, keep *segment.AbortedTxn) {
	t.startUpTo(h.LastOffset())
	if empty {
		return true, nil // an earlier cleaning emptied it
	}
	pid := h.ProducerID
	switch typ {
	case log.ControlAbort:
		a, ok := t.active[pid]
		delete(t.active, pid)
		delete(t.committed, pid)
		if ok && a.seen {
			return false, &a.txn
		}
		return true, nil
	case log.ControlCommit:
		seen := t.committed[pid]
		delete(t.committed, pid)
		if a, ok := t.active[pid]; ok && a.txn.LastOffset <= h.BaseOffset {
			delete(t.active, pid) // its marker is gone; it has ended
		}
		return !seen, nil
	}
	return false, nil
}

// markerType reads the type of the marker in the control batch b: empty
// when the batch holds no record (a cleaning emptied it). A batch that does
// not read is not a marker this cleaning may remove (ok false).
func markerType(dec *log.Decoder, b []byte, h log.BatchHeader) (typ log.ControlType, empty, ok bool) {
	typ, _, ok, err := log.ParseControlBatch(dec, b, h)
	return typ, err == nil && !ok, err == nil
}
