package segment

import (
	"sync/atomic"
	"unsafe"

	"github.com/stratalog/strata/log"
)

// recordStride is the spacing of the record positions a segment remembers
// in a large batch: a lookup into the middle of one steps over at most
// recordStride-1 records, instead of every record before the one it wants.
const recordStride = 4

// A batch's record positions are remembered only if it holds at least
// 2*recordStride records and startsMinBatch bytes. The size makes the batch
// alone in its 4 KiB block of the file, which is how the table finds it.
const (
	startsMinBatch   = 1 << startsBlockShift
	startsBlockShift = 12
	startsChunkSlots = 1 << (chunkShift - startsBlockShift)
	// startsBudgetShift bounds what a segment spends on remembered positions
	// to 1/64 of its mapped bytes (16 MiB for a 1 GiB segment; with 100-byte
	// records it takes about 1.2% of the bytes looked up into).
	startsBudgetShift = 6
)

// startsInline is how many record positions a starts holds in itself:
// those of a batch of up to startsInline*recordStride (104) records are read
// from the struct, without a slice to follow to another cache miss. The
// struct is then 144 bytes (a size class of the allocator), three cache
// lines; the first holds the positions of the first 52 records.
const startsInline = 26

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
// lookups landed in the middle of, up to a budget. The first batch learnt
// is held in the table itself, so that a segment read in one large batch
// (the last records of a log after a restart) spends no memory of its own
// on it. The others' slots (one per 4 KiB block of the file) come in chunks
// of 2 KiB per MiB of file, allocated when a batch in that MiB is first
// remembered (see chunkTable). Readers use it without a lock; reset needs
// the segment to itself (truncate, Recover).
//
// Appends leave the table to the lookups, though the encoder knows the
// positions: having the encoder hand them to the segment at each append of
// 100 records of 100 B cost 7% of the append rate on the development VM,
// for 10% on the first random lookups into what was appended (about half
// of it the larger encoded batch handed down, half the heap entry per
// batch).
type startsTable struct {
	first      starts
	firstState atomic.Uint32 // firstEmpty, firstFilling or firstSet
	slots      chunkTable[[startsChunkSlots]atomic.Pointer[starts]]
	used       atomic.Int64 // bytes of chunks, their tables and positions
}

// The states of a startsTable's first batch: none yet, one being learnt
// (by one reader, while the others find nothing there), and one that
// readers may use.
const (
	firstEmpty = iota
	firstFilling
	firstSet
)

// slot returns the index of pos's 4 KiB block in its chunk.
func slot(pos int64) int { return int(pos>>startsBlockShift) & (startsChunkSlots - 1) }

// get returns what is remembered of the batch at pos, or nil.
func (t *startsTable) get(pos int64) *starts {
	if t.firstState.Load() == firstSet && t.first.pos == pos {
		return &t.first
	}
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
		// At most the chunk, its page and the directory.
		const most = chunkCost + 8*chunkPageLen + 8*chunkDirLen
		if t.used.Load()+most+cost > budget {
			return
		}
		var made int64
		c, made = t.slots.make(e.pos, size)
		t.used.Add(made)
		if c == nil {
			return
		}
	}
	if t.used.Load()+cost <= budget && c[slot(e.pos)].CompareAndSwap(nil, e) {
		t.used.Add(cost)
	}
}

// learn returns the positions of the records of batch, at pos in a file
// mapped over size bytes, which has n records, learnt from its length
// prefixes (see recordStarts), and remembers them: as the table's first
// batch if it has none, else within the budget. It returns nil if the
// prefixes do not add up to the batch's size.
func (t *startsTable) learn(pos int64, batch []byte, n int, size int64) *starts {
	if t.firstState.CompareAndSwap(firstEmpty, firstFilling) {
		if !fillStarts(&t.first, pos, batch, n) {
			t.firstState.Store(firstEmpty)
			return nil
		}
		t.used.Add(4 * int64(cap(t.first.more)))
		t.firstState.Store(firstSet)
		return &t.first
	}
	e := recordStarts(pos, batch, n)
	if e != nil {
		t.put(e, size)
	}
	return e
}

// reset forgets everything.
func (t *startsTable) reset() {
	t.firstState.Store(firstEmpty)
	t.first.more = nil
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
// recordStride-th record starts, and the segment remembers that: the first
// such batch in the segment itself, the others in 144 bytes each (plus 4
// per 4 records past the first 104, for either) within a budget of 1/64 of
// its size. A batch whose prefixes do not add up to its size is not
// remembered; the caller's own steps report the damage.
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
	return s.starts.learn(c.last, batch, n, int64(len(s.data)))
}

// recordStarts returns the positions in batch (which is at pos) of records
// 0, recordStride, 2*recordStride…, or nil if the length prefixes of its n
// records do not add up to its size (see fillStarts).
func recordStarts(pos int64, batch []byte, n int) *starts {
	e := new(starts)
	if !fillStarts(e, pos, batch, n) {
		return nil
	}
	return e
}

// fillStarts is recordStarts into e, which it overwrites, reporting
// whether the prefixes add up. It fetches every line of the batch at once
// before it walks the prefixes (each position read from the one before),
// so that the walk finds them in cache rather than waiting for one miss
// after another: with the batch out of the caches, that takes less than
// half the time. The walk steps with log.SkipRecord, and reads the
// prefixes it leaves (longer ones, and any that do not read) with
// log.RecordLength.
func fillStarts(e *starts, pos int64, batch []byte, n int) bool {
	m := (n + recordStride - 1) / recordStride
	e.pos, e.n, e.more = pos, int32(m), nil
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
		if q := log.SkipRecord(batch, p); q > 0 && q <= len(batch) {
			p = q
			continue
		}
		prefix, length, err := log.RecordLength(batch[p:])
		if err != nil {
			return false
		}
		p += prefix + length
	}
	return p == len(batch)
}
