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

// visibleEnd returns the end of what a reader of level iso sees, given the
// high watermark hw: hw, or the last stable offset under ReadCommitted.
func (p *Partition) visibleEnd(iso Isolation, hw int64) int64 {
	if iso == ReadCommitted {
		return min(hw, p.LastStableOffset())
	}
	return hw
}

// txnFilter is what a ReadCommitted reader knows of the aborted
// transactions around its position, as a Kafka consumer keeps the aborted
// transactions of a fetch response: it asks the partition (AbortedTxns)
// for those overlapping the offsets it is about to read, up to the end it
// can see, and a transactional batch whose producer has an aborted
// transaction spanning it is skipped. A batch neither transactional nor a
// marker is never looked at.
type txnFilter struct {
	upto  int64        // the aborted transactions starting below this are in known; -1 for none
	known []AbortedTxn // by FirstOffset; those the reader has passed are dropped
}

func (f *txnFilter) reset() {
	f.upto = -1
	f.known = f.known[:0]
}

// aborted reports whether the batch with header h, transactional, belongs
// to an aborted transaction. limit is the end the reader sees.
func (f *txnFilter) aborted(p *Partition, h log.BatchHeader, limit int64) bool {
	if h.LastOffset() >= f.upto && limit > f.upto {
		// Every transaction starting below limit is complete, and the
		// aborted ones are in the index.
		n := len(f.known)
		for _, t := range p.AbortedTxns(h.BaseOffset, limit) {
			if t.FirstOffset >= f.upto {
				f.known = append(f.known, t)
			}
		}
		slices.SortFunc(f.known[n:], func(a, b AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
		f.upto = limit
	}
	hit := false
	n, i := 0, 0
	for ; i < len(f.known) && f.known[i].FirstOffset <= h.LastOffset(); i++ {
		t := f.known[i]
		if t.LastOffset < h.BaseOffset {
			continue // passed: its marker is behind the reader
		}
		if t.ProducerID == h.ProducerID && h.BaseOffset < t.LastOffset {
			hit = true
		}
		f.known[n] = t
		n++
	}
	f.known = append(f.known[:n], f.known[i:]...)
	return hit
}
