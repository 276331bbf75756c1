package partition

import (
	"math"

	"github.com/stratalog/strata/log"
)

// TxnFilter tells a read_committed read of raw batches (ReadBatches, or a
// segment's batches a caller walks) which batches belong to aborted
// transactions, as a Reader of NewReaderIsolation does for its own: it
// looks the aborted transactions up from the .txnindex a window at a time
// and remembers those around the batches it is shown. The batches must be
// shown in rising offset order, each below the last stable offset read
// before fetching it (what a read_committed read returns); Reset after a
// jump back. A TxnFilter is not safe for concurrent use.
type TxnFilter struct {
	p *Partition
	f txnFilter
}

// NewTxnFilter returns a TxnFilter for p's batches.
func (p *Partition) NewTxnFilter() *TxnFilter {
	t := &TxnFilter{p: p}
	t.f.reset()
	return t
}

// Aborted reports whether the batch with header h belongs to a transaction
// that was aborted, so that a read_committed read skips it. A batch that is
// neither transactional nor a marker never is, and costs nothing; neither
// is a batch at or past the last stable offset, whose transaction may still
// be open (a read_committed read stops before it).
func (t *TxnFilter) Aborted(h log.BatchHeader) bool {
	if !h.IsTransactional() && !h.IsControl() {
		return false
	}
	lso := t.p.LastStableOffset()
	if h.LastOffset() >= lso {
		return false
	}
	return t.f.aborted(t.p, h, lso, math.MaxInt64)
}

// Reset forgets what the filter learnt, for batches from anywhere.
func (t *TxnFilter) Reset() { t.f.reset() }

// InAbortedTxn reports whether the batch with header h belongs to an
// aborted transaction: TxnFilter.Aborted for one batch, as a lookup of one
// record by offset needs it (a binary search in the .txnindex of the
// segment holding h, and a look at the later segments' entries until one
// closes the search).
func (p *Partition) InAbortedTxn(h log.BatchHeader) bool {
	if !h.IsTransactional() || h.IsControl() || h.ProducerID < 0 {
		return false
	}
	for _, t := range p.AbortedTxns(h.BaseOffset, h.NextOffset()) {
		if t.ProducerID == h.ProducerID && t.FirstOffset <= h.BaseOffset && h.BaseOffset < t.LastOffset {
			return true
		}
	}
	return false
}
