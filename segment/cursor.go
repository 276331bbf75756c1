package segment

import (
	"math"

	"github.com/stratalog/strata/log"
)

// Cursor reads a segment's batches in offset order, one at a time, straight
// from the segment's memory mapping. Each batch is checked as Read checks
// it (header rules, CRC-32C once per process, offsets that follow the
// previous batch) when Next reaches it, not before: a cursor that is
// positioned and then read once checks one batch.
//
// The batches alias the mapping: they are valid only while the segment stays
// open, so the caller must hold it (the partition's reference count) until
// it is done with them. A Cursor is a small value; copy it freely, but use
// each copy from one goroutine at a time. The zero Cursor returns nothing.
//
// A cursor can be bounded by an offset (SetLimit): the partition's high
// watermark, so that readers never see a batch the partition has not made
// visible yet, although the segment holds it.
type Cursor struct {
	s       *Segment
	pos     int64 // position of the next batch
	last    int64 // position of the batch Next returned last, -1 if none
	expect  int64 // offset the next batch must start at (at or past, with gaps); -1 unknown
	end     int64 // size published when last loaded
	next    int64 // next offset published when last loaded
	limit   int64 // batches with offsets at or past this are not returned
	limited bool  // the last Next stopped at the limit
}

// CursorAt returns a Cursor at the first batch whose last offset is at least
// offset (the batch holding offset, or the first one after a gap). An
// offset below the base offset starts at the first batch; one past the
// published batches gives a cursor that returns nothing until they reach
// it. CursorAt checks the index entry it starts from and the batch headers it
// passes, and fails with ErrCorrupt if they do not hold together.
func (s *Segment) CursorAt(offset int64) (Cursor, error) {
	var c Cursor
	err := s.CursorInto(&c, offset)
	return c, err
}

// CursorInto is CursorAt positioning *c, which it overwrites (the zero
// Cursor on error), rather than returning a Cursor: a lookup that keeps
// its cursor in place copies none.
func (s *Segment) CursorInto(c *Cursor, offset int64) error {
	*c = Cursor{}
	if s.closed {
		return ErrClosed
	}
	c.s, c.expect, c.last, c.limit = s, -1, -1, math.MaxInt64
	c.load()
	if offset >= c.next || c.end == 0 {
		// Nothing published reaches offset: wait after the published
		// batches, where the next one will start.
		c.pos, c.expect = c.end, c.next
		return nil
	}
	pos, expect, err := s.locate(max(offset, s.base), c.end)
	if err != nil {
		*c = Cursor{}
		return err
	}
	if pos < 0 {
		// A gap at the end of the segment: nothing here reaches offset.
		c.pos, c.expect = c.end, -1
		return nil
	}
	c.pos, c.expect = pos, expect
	return nil
}

// load reads what the writer has published: the next offset first, then the
// size (the writer stores the size first).
func (c *Cursor) load() {
	c.next = c.s.next.Load()
	c.end = c.s.size.Load()
}

// SetLimit bounds the cursor: Next returns only batches whose last offset
// is below limit, and stops (AtLimit) at the first that is not. A cursor
// starts without a bound.
func (c *Cursor) SetLimit(limit int64) { c.limit = limit }

// AtLimit reports whether the last call to Next returned no batch because
// the next one reaches the limit, rather than because the segment has
// published nothing more.
func (c *Cursor) AtLimit() bool { return c.limited }

// Next returns the next batch, checked, and the header it was checked
// with. It returns nil (and no error) at the end of the batches the segment
// has published, or at the first batch that reaches the limit (see
// SetLimit); a later call returns the batches appended or made visible
// meanwhile. The batch aliases the segment's mapping (see Cursor).
func (c *Cursor) Next() (log.BatchHeader, []byte, error) {
	var h log.BatchHeader
	batch, err := c.NextInto(&h)
	return h, batch, err
}

// NextInto is Next that decodes the batch's header into *h, for a caller
// that keeps it in place rather than copy it; *h is Next's header.
func (c *Cursor) NextInto(h *log.BatchHeader) ([]byte, error) {
	s := c.s
	c.limited = false
	if s == nil {
		*h = log.BatchHeader{}
		return nil, nil
	}
	if c.pos+log.PrefixSize > c.end {
		c.load()
		if c.pos+log.PrefixSize > c.end {
			*h = log.BatchHeader{}
			return nil, nil
		}
	}
	if err := s.headerInto(c.pos, c.end, h); err != nil {
		return nil, err
	}
	if h.BaseOffset >= c.next {
		// Written after next was loaded: look again.
		c.load()
		if h.BaseOffset >= c.next {
			*h = log.BatchHeader{}
			return nil, nil
		}
	}
	if h.LastOffset() >= c.limit {
		c.limited = true
		*h = log.BatchHeader{}
		return nil, nil
	}
	if c.expect >= 0 {
		if err := s.checkFollows(h.BaseOffset, c.expect, c.pos); err != nil {
			return nil, err
		}
	}
	size := int64(h.Size())
	if err := s.check(c.pos, int(size)); err != nil {
		return nil, err
	}
	batch := s.data[c.pos : c.pos+size : c.pos+size]
	c.last = c.pos
	c.pos += size
	c.expect = h.NextOffset()
	return batch, nil
}

// nextSize returns the size of the next batch as its header gives it, and
// false if no header is published there. A header that is not plausible
// gives 0, for Next to report.
func (c *Cursor) nextSize() (int64, bool) {
	if c.pos+log.PrefixSize > c.end {
		c.load()
		if c.pos+log.PrefixSize > c.end {
			return 0, false
		}
	}
	_, _, size, _ := c.s.peek(c.pos, c.end)
	return size, true
}

// touch reads one byte of every cache line of b and returns their xor. The
// loads do not depend on one another, so the CPU fetches the lines in
// parallel; a scan that then hops from header to header (each position
// read from the one before) finds them in cache instead of waiting for one
// miss after another.
//
//go:noinline
func touch(b []byte) byte {
	var x byte
	for i := 0; i < len(b); i += 64 {
		x ^= b[i]
	}
	return x
}

// touchHeaders is touch for a scan over batches that should lie stride
// bytes apart: it reads the lines of the header fields a scan reads (the
// first 27 bytes) of each, and every line of the last stride bytes of b.
//
//go:noinline
func touchHeaders(b []byte, stride int) byte {
	if stride <= 0 {
		return touch(b)
	}
	var x byte
	last := max(0, len(b)-stride)
	for i := 0; i < last; i += stride {
		x ^= b[i] ^ b[min(i+26, len(b)-1)]
	}
	return x ^ touch(b[last:])
}
