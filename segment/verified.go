package segment

import "sync/atomic"

// verifiedTail is a stretch [from, to) of a segment's file, beside its
// verified prefix, whose batches are known good: Open starts it empty at
// the end of the file, the appends that follow extend it upward, and reads
// of the batches just below it (a lookup of the last records after a
// restart) extend it downward. A read at the end of a reopened segment
// thus costs no mark (no chunk of batchMarks, 8 KiB per MiB), nor does
// each batch appended after a restart. Both ends sit at batch boundaries.
// The two positions (below 2^31, MaxBytesLimit) share one word, so that
// readers and the writer change them without a lock.
type verifiedTail struct{ span atomic.Uint64 }

// packSpan and unpackSpan convert between a verifiedTail's word and its
// ends.
func packSpan(from, to int64) uint64 { return uint64(from)<<32 | uint64(uint32(to)) }

func unpackSpan(w uint64) (from, to int64) { return int64(w >> 32), int64(uint32(w)) }

// holds reports whether [pos, end) lies in the stretch.
func (t *verifiedTail) holds(pos, end int64) bool {
	from, to := unpackSpan(t.span.Load())
	return from <= pos && end <= to
}

// extend adds the batch at [pos, end), just checked, to the stretch if it
// adjoins it, and reports whether it did.
func (t *verifiedTail) extend(pos, end int64) bool {
	for {
		w := t.span.Load()
		from, to := unpackSpan(w)
		var next uint64
		switch {
		case pos == to:
			next = packSpan(from, end)
		case end == from:
			next = packSpan(pos, to)
		default:
			return false
		}
		if t.span.CompareAndSwap(w, next) {
			return true
		}
	}
}

// reset empties the stretch and starts it at pos, a batch boundary.
func (t *verifiedTail) reset(pos int64) { t.span.Store(packSpan(pos, pos)) }

// cut drops what lies at or past cut, a batch boundary, from the stretch.
func (t *verifiedTail) cut(cut int64) {
	from, to := unpackSpan(t.span.Load())
	to = min(to, cut)
	t.span.Store(packSpan(min(from, to), to))
}
