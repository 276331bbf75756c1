package segment

import (
	"sync/atomic"

	"github.com/stratalog/strata/log"
)

// alikeMinBatch is the least size of a batch that starts a run of alike
// batches (see alikeRun). A smaller one only ends the run there is, so
// that appends of small batches of changing sizes (single records of
// varied lengths) pay a comparison and no store.
const alikeMinBatch = startsMinBatch

// alikeRun is the last run of batches appended since the segment was
// opened that are alike: each of the same size and the same number of
// offsets, and each starting at the offset after the one before, so that
// the batch holding an offset of the run lies at a position computed from
// the offset alone. A lookup into the run reads no index entry: with
// batches spread over more memory than the caches hold, the entries it
// would read are a cache miss of their own, which the batch's header can
// only wait for (the arithmetic costs nothing).
//
// The run covers the batches from its first to the segment's published
// size, as long as it is the current run: a batch that is not alike ends
// it (starting another if it is large enough), before the segment
// publishes that batch. A reader that loads the run after the size it
// bounds its reads with therefore sees either a run whose batches all lie
// alike up to that size, or one that starts past it, or none (see
// lookup). The writer keeps its own copy of the run in plain fields;
// reset needs the segment to itself (truncate, Recover).
type alikeRun struct {
	// at packs the position of the run's first batch (high 32 bits) and
	// the size of each (low 32), and from its first offset relative to
	// the segment's base (high 32) and the offsets of each batch (low
	// 32); from is 0 when there is no run. Positions, sizes and relative
	// offsets fit 31 bits in a segment (its indexes hold them as int32).
	at   atomic.Uint64
	from atomic.Uint64

	// Writer state.
	size, span int64 // each batch's size and offsets
	next       int64 // the offset the next batch of the run starts at
	nextPos    int64 // and its position
	on         bool  // a run is published
}

// add adds the batch with header h, appended at pos to a segment based at
// segBase, to the run if it is alike, and otherwise ends the run (and
// starts a new one at it, if it is large enough). It runs before the
// segment publishes the batch. Without a run, a small batch costs only
// the check here.
func (r *alikeRun) add(h *log.BatchHeader, pos, segBase int64) {
	if r.on || h.Size() >= alikeMinBatch {
		r.extend(h, pos, segBase)
	}
}

// extend is add once there is a run or the batch may start one.
func (r *alikeRun) extend(h *log.BatchHeader, pos, segBase int64) {
	size, span := int64(h.Size()), int64(h.LastOffsetDelta)+1
	if r.on && size == r.size && span == r.span && h.BaseOffset == r.next && pos == r.nextPos {
		r.next, r.nextPos = r.next+span, pos+size
		return
	}
	rel := h.BaseOffset - segBase
	if size < alikeMinBatch || pos < 0 || pos > 1<<31-1 || size > 1<<31-1 || rel < 0 || rel > 1<<31-1 || span <= 0 || span > 1<<31-1 {
		r.end()
		return
	}
	// from first, so that a reader that sees the new at sees no run or
	// the new one (see lookup).
	r.from.Store(0)
	r.at.Store(uint64(pos)<<32 | uint64(size))
	r.from.Store(uint64(rel)<<32 | uint64(span))
	r.size, r.span, r.next, r.nextPos, r.on = size, span, h.BaseOffset+span, pos+size, true
}

// end ends the run, if there is one: the batches appended from now on
// are found through the index.
func (r *alikeRun) end() {
	if r.on {
		r.from.Store(0)
		r.on = false
	}
}

// reset forgets the run, for a segment cut back or recovered.
func (r *alikeRun) reset() {
	r.from.Store(0)
	r.at.Store(0)
	r.on = false
}

// runBatch is a batch of the run that a lookup found: its position, size,
// base offset and offsets.
type runBatch struct {
	pos, size, base, span int64
}

// lookup returns the batch of the run that holds offset, in a segment
// based at segBase whose batches a reader bounds at end (the published
// size it loaded before calling), and false if the run holds no such
// batch below end, or there is no run.
func (r *alikeRun) lookup(offset, segBase, end int64) (runBatch, bool) {
	from := r.from.Load()
	if from == 0 {
		return runBatch{}, false
	}
	at := r.at.Load()
	if r.from.Load() != from {
		return runBatch{}, false // the writer started another meanwhile
	}
	first, span := segBase+int64(from>>32), int64(from&(1<<32-1))
	start, size := int64(at>>32), int64(at&(1<<32-1))
	if offset < first || span <= 0 {
		return runBatch{}, false
	}
	i := (offset - first) / span
	pos := start + i*size
	if pos+size > end {
		return runBatch{}, false
	}
	return runBatch{pos: pos, size: size, base: first + i*span, span: span}, true
}
