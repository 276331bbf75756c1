package partition

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/stratalog/strata/log"
)

// Isolation is what a reader sees of transactions, Kafka's
// isolation.level.
type Isolation int8

// The isolation levels.
const (
	// ReadUncommitted sees every record below the high watermark, those of
	// open and aborted transactions too (Kafka's default).
	ReadUncommitted Isolation = iota
	// ReadCommitted sees the records below the last stable offset, except
	// those of aborted transactions: a transaction's records appear once it
	// commits, all at once, and never if it aborts.
	ReadCommitted
)

// String returns Kafka's name for the level.
func (i Isolation) String() string {
	switch i {
	case ReadUncommitted:
		return "read_uncommitted"
	case ReadCommitted:
		return "read_committed"
	}
	return fmt.Sprintf("Isolation(%d)", int8(i))
}

// Valid reports whether i is one of the levels.
func (i Isolation) Valid() bool { return i == ReadUncommitted || i == ReadCommitted }

// VisibleEnd returns the end of what a reader of level iso sees: the high
// watermark, or under ReadCommitted the last stable offset (never past
// the high watermark).
func (p *Partition) VisibleEnd(iso Isolation) int64 {
	return p.visibleEnd(iso, p.HighWatermark())
}

// visibleEnd is VisibleEnd given the high watermark hw.
func (p *Partition) visibleEnd(iso Isolation, hw int64) int64 {
	if iso == ReadCommitted {
		return min(hw, p.LastStableOffset())
	}
	return hw
}

// txnFilter is what a ReadCommitted reader knows of the aborted
// transactions around its position, as a Kafka consumer keeps the aborted
// transactions of a fetch response: it asks the partition for those
// overlapping the offsets it is about to read, a window at a time within
// the segment it reads and never past the end it can see, and a
// transactional batch whose producer has an aborted transaction spanning
// it is skipped. A batch neither transactional nor a marker is never
// looked at.
type txnFilter struct {
	upto    int64        // the aborted transactions starting below this are known; -1 for none
	pending []AbortedTxn // known, not begun at the reader's position, by FirstOffset
	head    int          // pending[:head] have begun
	active  []AbortedTxn // begun, their markers not passed yet
}

// txnWindow is how many offsets past a batch a ReadCommitted reader looks
// up aborted transactions for at a time: a lookup costs a binary search
// and the transactions it finds, so a reader positioned anywhere (a
// lookup by offset) pays for the transactions around it, not for those of
// the whole segment.
const txnWindow = 4096

func (f *txnFilter) reset() {
	f.upto = -1
	f.pending, f.head = f.pending[:0], 0
	f.active = f.active[:0]
}

// aborted reports whether the batch with header h, transactional, belongs
// to an aborted transaction. limit is the end the reader sees (every
// transaction starting below it is complete, the aborted ones in the
// index), segEnd the end of the segment holding the batch.
func (f *txnFilter) aborted(p *Partition, h log.BatchHeader, limit, segEnd int64) bool {
	if h.LastOffset() >= f.upto {
		upto := max(min(limit, segEnd, h.NextOffset()+txnWindow), h.NextOffset())
		f.pending = append(f.pending[:0], f.pending[f.head:]...)
		f.head = 0
		n := len(f.pending)
		f.pending = p.appendAbortedTxns(f.pending, h.BaseOffset, upto)
		// Those that start below the previous bound are known already.
		kept := n
		for _, t := range f.pending[n:] {
			if t.FirstOffset >= f.upto {
				f.pending[kept] = t
				kept++
			}
		}
		f.pending = f.pending[:kept]
		slices.SortFunc(f.pending[n:], func(a, b AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
		f.upto = upto
	}
	for f.head < len(f.pending) && f.pending[f.head].FirstOffset <= h.LastOffset() {
		f.active = append(f.active, f.pending[f.head])
		f.head++
	}
	hit := false
	n := 0
	for _, t := range f.active {
		if t.LastOffset < h.BaseOffset {
			continue // passed: its marker is behind the reader
		}
		if t.ProducerID == h.ProducerID && h.BaseOffset < t.LastOffset {
			hit = true
		}
		f.active[n] = t
		n++
	}
	f.active = f.active[:n]
	return hit
}
