package segment

import (
	"sync/atomic"
	"unsafe"

	"github.com/stratalog/strata/log"
)

// recordStride is the spacing of the record positions a segment remembers
// in a large batch: a lookup into the middle of one steps over at most
// recordStride-1 records, instead of every record before the one it wants.
const recordStride = 8

// A batch's record positions are remembered only if it holds at least
// 2*recordStride records and startsMinBatch bytes. The size makes the batch
// alone in its 4 KiB block of the file, which is how the table finds it.
const (
	startsMinBatch   = 1 << startsBlockShift
	startsBlockShift = 12
	startsChunkSlots = 1 << (chunkShift - startsBlockShift)
	// startsBudgetShift bounds what a segment spends on remembered positions
	// to 1/64 of its mapped bytes (16 MiB for a 1 GiB segment; with 100-byte
	// records it takes about 1% of the bytes looked up into).
	startsBudgetShift = 6
)

// startsInline is how many record positions a starts holds in itself:
// those of a batch of up to startsInline*recordStride (184) records are read
// from the struct, without a slice to follow to another cache miss. The
// struct is then 128 bytes, two cache lines; the first holds the positions
// of the first 104 records.
const startsInline = 23

// starts is what a segment remembers of one batch: where it is, and where
// its records 0, recordStride, 2*recordStride… start in it.
type starts struct {
	pos    int64
	n      int32                // positions held
	inline [startsInline]uint32 // the first of them
	more   []uint32             // the rest, for larger batches
}

// at returns the position of record i*recordStride, and false past the
// positions held.
func (e *starts) at(i int) (uint32, bool) {
	switch {
	case i < 0 || i >= int(e.n):
		return 0, false
	case i < startsInline:
		return e.inline[i], true
	}
	return e.more[i-startsInline], true
}

// cost is what e takes of the table's budget.
func (e *starts) cost() int64 { return int64(unsafe.Sizeof(*e)) + 4*int64(cap(e.more)) }

// startsTable remembers the record positions of the large batches that
// lookups landed in the middle of, up to a budget. Slots (one per 4 KiB
// block of the file) come in chunks of 2 KiB per MiB of file, allocated when
// a batch in that MiB is first remembered. Readers use it without a lock;
// reset needs the segment to itself (truncate, Recover).
type startsTable struct {
	slots chunkTable[[startsChunkSlots]atomic.Pointer[starts]]
	used  atomic.Int64 // bytes of chunks and tables
}

// slot returns the index of pos's 4 KiB block in its chunk.
func slot(pos int64) int { return int(pos>>startsBlockShift) & (startsChunkSlots - 1) }

// get returns what is remembered of the batch at pos, or nil.
func (t *startsTable) get(pos int64) *starts {
	c := t.slots.get(pos)
	if c == nil {
		return nil
	}
	if e := c[slot(pos)].Load(); e != nil && e.pos == pos {
		return e
	}
	return nil
}

// put remembers e in a file mapped over size bytes, unless that would go
// over the budget.
func (t *startsTable) put(e *starts, size int64) {
	const chunkCost = 8 * startsChunkSlots
	cost := e.cost()
	budget := size >> startsBudgetShift
	c := t.slots.get(e.pos)
	if c == nil {
		if t.used.Load()+chunkCost+cost > budget {
			return
		}
		var made bool
		if c, made = t.slots.make(e.pos, size); made {
			t.used.Add(chunkCost)
		}
		if c == nil {
			return
		}
	}
	if t.used.Load()+cost <= budget && c[slot(e.pos)].CompareAndSwap(nil, e) {
		t.used.Add(cost)
	}
}

// reset forgets everything.
func (t *startsTable) reset() {
	t.slots.reset()
	t.used.Store(0)
}

// RecordStart helps a lookup reach record k (counting from 0) of batch, the
// batch the last call to Next returned with its header h: it returns the position in batch of
// record j, the last record at or before k whose position the segment
// remembers, and j. The caller steps over records j to k-1 by their length
// prefixes. With nothing remembered it returns the first record's position
// and 0. Either way it fetches the cache lines from there to a little past
// where record k lies if the records are of a size, at once, so that the
// steps (each position read from the one before) do not wait for one cache
// miss after another.
//
// The first lookup into a batch of at least 2*recordStride records and
// 4 KiB walks its length prefixes once to learn where every
// recordStride-th record starts, and the segment remembers that (128
// bytes, plus 4 per 8 records past the first 184) within a budget of 1/64
// of its size. A batch whose
// prefixes do not add up to its size is not remembered; the caller's own
// steps report the damage.
func (c *Cursor) RecordStart(batch []byte, h *log.BatchHeader, k int) (at, j int) {
	at = log.BatchHeaderSize
	if c == nil || c.s == nil || len(batch) < log.BatchHeaderSize {
		return at, 0
	}
	n := int(h.NumRecords)
	if e := c.starts(batch, k, n); e != nil {
		if p, ok := e.at(k / recordStride); ok {
			at, j = int(p), k/recordStride*recordStride
		}
	}
	if m := min(k-j+2, n-j); m > 2 {
		_ = touch(batch[at : at+(len(batch)-at)*m/(n-j)])
	}
	return at, j
}

// starts returns the record positions remembered for batch, the batch Next
// returned last, of n records, learning them first if it is worth it, or
// nil.
func (c *Cursor) starts(batch []byte, k, n int) *starts {
	if k < recordStride || n < 2*recordStride || len(batch) < startsMinBatch || c.last < 0 {
		return nil
	}
	s := c.s
	if e := s.starts.get(c.last); e != nil {
		return e
	}
	e := recordStarts(c.last, batch, n)
	if e == nil {
		return nil
	}
	s.starts.put(e, int64(len(s.data)))
	return e
}

// recordStarts returns the positions in batch (which is at pos) of records
// 0, recordStride, 2*recordStride…, or nil if the length prefixes of its n
// records do not add up to its size. It fetches every line of the batch at
// once before it walks the prefixes (each position read from the one
// before), so that the walk finds them in cache rather than waiting for one
// miss after another: with the batch out of the caches, that takes less
// than half the time.
func recordStarts(pos int64, batch []byte, n int) *starts {
	m := (n + recordStride - 1) / recordStride
	e := &starts{pos: pos, n: int32(m)}
	if m > startsInline {
		e.more = make([]uint32, m-startsInline)
	}
	_ = touch(batch)
	p := log.BatchHeaderSize
	for i := range n {
		if i%recordStride == 0 {
			if i/recordStride < startsInline {
				e.inline[i/recordStride] = uint32(p)
			} else {
				e.more[i/recordStride-startsInline] = uint32(p)
			}
		}
		prefix, length, err := log.RecordLength(batch[p:])
		if err != nil {
			return nil
		}
		p += prefix + length
	}
	if p != len(batch) {
		return nil
	}
	return e
}
