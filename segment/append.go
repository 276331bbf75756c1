package segment

import (
	"fmt"

	"github.com/stratalog/strata/log"
)

// Append writes one or more whole batches, already stamped with their
// offsets, to the end of the segment, and indexes them. The bytes are copied
// into the file's mapping, or written with one pwrite(2) (see
// Config.WriteCalls); either way they are in the OS when Append returns. A
// batch gets an offset-index entry (its last offset → its position) when
// more than IndexIntervalBytes were written since the previous entry, per
// batch rather than per call (as Kafka does since KAFKA-806).
//
// The batches must follow the segment: the first starts at NextOffset (or,
// with AllowGaps, past the last offset), each later one at the previous one's
// next offset. Their headers are checked; their CRCs are trusted, as the
// caller encoded them. An append that does not fit the indexes or the
// segment's relative offsets fails with ErrFull and changes nothing; the
// caller rolls to a new segment.
//
// A failed write leaves the segment as it was: the size and next offset do
// not move, and partial bytes past the end are ignored (cut off, or
// overwritten by the next append). So does a full disk (an error wrapping
// syscall.ENOSPC), also when the bytes would fit but the time index cannot
// reserve the room of the entry Seal writes: a segment takes no record
// that sealing it could not cover.
func (s *Segment) Append(batches []byte) error {
	if err := s.checkWritable(len(batches)); err != nil {
		return err
	}
	first, err := s.checkAppend(batches)
	if err != nil {
		return err
	}
	return s.appendChecked(batches, &first, len(batches) > first.Size())
}

// AppendHeader is Append for one batch whose header h the caller has read
// (encoded it, or read it with log.ReadHeader), which saves parsing it
// again. It neither changes *h nor keeps h.
func (s *Segment) AppendHeader(batch []byte, h *log.BatchHeader) error {
	if err := s.checkWritable(len(batch)); err != nil {
		return err
	}
	if h.Size() != len(batch) {
		return fmt.Errorf("segment: a batch of %d bytes declares %d: %w", len(batch), h.Size(), ErrInvalidBatch)
	}
	c := s.newAppendCheck()
	if err := c.add(h, 0); err != nil {
		return err
	}
	if err := c.fits(len(batch)); err != nil {
		return err
	}
	return s.appendChecked(batch, h, false)
}

// checkWritable fails unless the segment takes an append of n bytes.
func (s *Segment) checkWritable(n int) error {
	switch {
	case s.closed:
		return ErrClosed
	case s.sealed:
		return fmt.Errorf("segment: %s: %w", s.path, ErrSealed)
	case n == 0:
		return fmt.Errorf("segment: no batch to append: %w", ErrInvalidBatch)
	}
	return nil
}

// appendChecked writes batches, checked, whose first header is first, and
// indexes them; more says whether headers follow the first, to be read
// from the bytes.
func (s *Segment) appendChecked(batches []byte, first *log.BatchHeader, more bool) error {
	pos := s.size.Load()
	if err := s.needIndexes(pos + int64(len(batches))); err != nil {
		return err
	}
	if s.times.OnDisk() {
		if err := s.times.Reserve(); err != nil {
			return err
		}
	}
	if err := s.write(batches, pos); err != nil {
		return err
	}
	end := pos + int64(len(batches))
	// The bytes came from memory the caller encoded: no need to CRC them on
	// read. They extend the verified prefix or, when it does not reach
	// them (a segment reopened and not read through), the verified tail,
	// which Open, Recover and Truncate leave at the end of the file; were
	// neither to reach them, each batch would be marked checked.
	extends := s.verified.CompareAndSwap(pos, end) || s.tail.extend(pos, end)
	last := first
	index := func(h *log.BatchHeader, at int64) {
		s.indexBatch(h, at)
		s.alike.add(h, at, s.base)
		if !extends {
			s.marks.set(at, int64(len(s.data)))
		}
		last = h
	}
	if !more {
		index(first, pos)
	} else {
		for it := log.NewBatchIter(batches); it.Next(); { // checked by checkAppend
			h := it.Header()
			index(&h, pos+int64(it.Pos()))
		}
	}
	s.size.Store(end)
	s.next.Store(last.NextOffset())
	return nil
}

// indexBatch adds the batch with header h at pos to the in-memory state
// and, when more than IndexIntervalBytes were written since the last entry,
// to the indexes. An entry the indexes do not take only leaves the segment
// sparser there (reads scan further), so indexBatch never fails: Append
// checks first that the indexes have room; in recovery a full index (a
// segment written with larger indexes) is such a case, and so is an entry
// for which the disk has no room (the index files are sparse, their blocks
// reserved ahead of the entries), after which the next batch tries again.
func (s *Segment) indexBatch(h *log.BatchHeader, pos int64) {
	if s.firstTS < 0 {
		s.firstTS = h.MaxTimestamp
	}
	s.raiseMaxTimestamp(h)
	if s.sinceIndex > int64(s.cfg.IndexIntervalBytes) && !s.offsets.Full() && !s.times.Full() &&
		s.offsets.Append(h.LastOffset(), int32(pos)) == nil {
		// The time index may miss its entry too: lookups by time then
		// start from an earlier one.
		_ = s.times.MaybeAppend(s.maxTS.Load(), s.offsetOfMaxTS, false)
		s.sinceIndex = 0
	}
	s.sinceIndex += int64(h.Size())
}

// raiseMaxTimestamp makes h's max timestamp the segment's, and h's last
// offset the one that reached it, if it is above the segment's.
func (s *Segment) raiseMaxTimestamp(h *log.BatchHeader) {
	if h.MaxTimestamp > s.maxTS.Load() {
		s.maxTS.Store(h.MaxTimestamp)
		s.offsetOfMaxTS = h.LastOffset()
	}
}

// checkAppend checks that batches holds whole batches that follow the
// segment, fit its relative offsets and fit what is left of its indexes, and
// returns the header of the first.
func (s *Segment) checkAppend(batches []byte) (first log.BatchHeader, err error) {
	c := s.newAppendCheck()
	it := log.NewBatchIter(batches)
	for n := 0; it.Next(); n++ {
		h := it.Header()
		if n == 0 {
			first = h
		}
		if err := c.add(&h, it.Pos()); err != nil {
			return first, err
		}
	}
	if err := it.Err(); err != nil {
		return first, fmt.Errorf("segment: batch at byte %d of the append: %w: %w", it.Pos(), ErrInvalidBatch, err)
	}
	return first, c.fits(len(batches))
}

// appendCheck checks the batches of an append, one after another, against
// the segment.
type appendCheck struct {
	s       *Segment
	next    int64 // the offset the next batch must start at (or past)
	since   int64 // bytes since the last index entry
	entries int   // index entries the append adds
}

func (s *Segment) newAppendCheck() appendCheck {
	return appendCheck{s: s, next: s.next.Load(), since: s.sinceIndex}
}

// add checks the batch with header h at byte p of the append: RecordBatch
// v2, following the one before, within the segment's relative offsets.
func (c *appendCheck) add(h *log.BatchHeader, p int) error {
	s := c.s
	if h.IsLegacy() {
		return fmt.Errorf("segment: batch at byte %d of the append has magic %d; appends are RecordBatch v2: %w", p, h.Magic, ErrInvalidBatch)
	}
	if reason := s.follows(h.BaseOffset, c.next); reason != nil {
		return fmt.Errorf("segment: batch at byte %d of the append: %w: %w", p, reason, ErrInvalidBatch)
	}
	if !s.CanAppendOffset(h.LastOffset()) {
		return fmt.Errorf("segment: offset %d is too far from base offset %d: %w", h.LastOffset(), s.base, ErrFull)
	}
	if c.since > int64(s.cfg.IndexIntervalBytes) {
		c.entries++
		c.since = 0
	}
	c.since += int64(h.Size())
	c.next = h.NextOffset()
	return nil
}

// fits checks that n more bytes, and the index entries of the batches
// added, fit the segment.
func (c *appendCheck) fits(n int) error {
	s := c.s
	if s.size.Load()+int64(n) > int64(len(s.data)) {
		return fmt.Errorf("segment: %d more bytes would take %s past its %d bytes: %w", n, s.path, len(s.data), ErrFull)
	}
	if s.offsets.Entries()+c.entries > s.offsets.MaxEntries() || s.times.Entries()+c.entries > s.times.MaxEntries()-1 {
		return fmt.Errorf("segment: %d index entries needed, the indexes of %s are full: %w", c.entries, s.path, ErrFull)
	}
	return nil
}

// canFollow reports whether a batch with base offset base may come after a
// batch ending at next: at next, or past it with AllowGaps.
func (s *Segment) canFollow(base, next int64) bool {
	if s.cfg.AllowGaps {
		return base >= next
	}
	return base == next
}

// follows says why a batch with base offset base cannot come after a batch
// ending at next, or nil if it can.
func (s *Segment) follows(base, next int64) error {
	switch {
	case s.canFollow(base, next):
		return nil
	case s.cfg.AllowGaps:
		return fmt.Errorf("base offset %d is below the next offset %d", base, next)
	}
	return fmt.Errorf("base offset %d is not the next offset %d", base, next)
}

// checkFollows is follows for bytes already in the file: a mismatch there is
// corruption.
func (s *Segment) checkFollows(base, next, pos int64) error {
	if reason := s.follows(base, next); reason != nil {
		return corruptAt(s.path, pos, reason)
	}
	return nil
}
