package segment

import (
	"fmt"
)

// truncate removes every batch whose last offset is at least offset, so that
// the segment ends at a batch boundary: NextOffset afterwards is the base
// offset of the first removed batch (at most offset). Truncating at or past
// NextOffset changes nothing. The indexes drop their entries for the removed
// batches and the max timestamp is recomputed.
//
// truncate needs a writable, unsealed segment (reopen a sealed one with Open
// writable) without damage Open stepped over (Damaged), and must not run
// while a reader uses the segment.
func (s *Segment) truncate(offset int64) error {
	switch {
	case s.closed:
		return ErrClosed
	case s.sealed:
		return fmt.Errorf("segment: truncating %s: %w", s.path, ErrSealed)
	case offset >= s.next.Load():
		return nil
	case len(s.holes) > 0:
		// The rescan of the kept batches would stop at a hole after the
		// file was cut, leaving the state past the new end.
		return fmt.Errorf("segment: truncating %s, which holds damage Open stepped over (%w): recover it first", s.path, s.holes[0].err)
	}
	end := s.size.Load()
	cut, cutBase, err := s.locate(max(offset, s.base), end)
	if err != nil {
		return err
	}
	if cut < 0 {
		return nil // offset falls in a gap after the last batch
	}
	if cut > 0 {
		h, err := s.headerAt(cut, end)
		if err != nil {
			return err
		}
		cutBase = h.BaseOffset
	}

	s.allocated = min(s.allocated, cut) // whatever the outcome: never above the file's size
	s.zeroed = min(s.zeroed, cut)
	if err := s.log.Truncate(cut); err != nil {
		return fmt.Errorf("segment: truncating %s to %d: %w", s.path, cut, err)
	}
	s.offsets.TruncateTo(cutBase)
	s.times.TruncateTo(cutBase)
	if err := s.truncateTxns(cutBase); err != nil {
		return err
	}

	// Recompute the in-memory state: the time index's last entry covers the
	// batches up to the last offset-index entry; scan the ones after it.
	s.maxTS.Store(-1)
	s.offsetOfMaxTS = s.base
	if ts, off := s.times.LastEntry(); ts >= 0 {
		s.maxTS.Store(ts)
		s.offsetOfMaxTS = off
	}
	var from int64
	if n := s.offsets.Entries(); n > 0 {
		_, p := s.offsets.Entry(n - 1)
		from = int64(p)
	}
	s.sinceIndex = cut - from
	for p := from; p < cut; {
		h, err := s.headerAt(p, cut)
		if err != nil {
			return err
		}
		_ = s.raiseMaxTimestampChecked(h, p) // a damaged batch counts for nothing
		p += int64(h.Size())
	}
	if cut == 0 {
		s.firstTS = -1
	}
	s.verified.Store(min(s.verified.Load(), cut))
	s.tail.cut(cut)
	s.marks.reset() // a later append may put another batch where a marked one was
	s.starts.reset()
	s.alike.reset()
	s.size.Store(cut)
	s.next.Store(cutBase)
	return nil
}
