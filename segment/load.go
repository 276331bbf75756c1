package segment

import (
	"fmt"

	"github.com/stratalog/strata/log"
)

// load fills the in-memory state of a segment whose files are trusted: the
// size is the file's, the max timestamp the time index's last entry, and the
// next offset comes from scanning the batch headers after the offset index's
// last entry. A scanned batch raises the max timestamp only if its CRC
// holds (see raiseMaxTimestampChecked); one that fails is left for reads to
// report, and recorded for Damaged. The indexes get a shape check; a failure
// is ErrCorrupt, and the caller recovers the segment instead.
func (s *Segment) load() error {
	size, err := s.log.Size()
	if err != nil {
		return fmt.Errorf("segment: %s: %w", s.path, err)
	}
	s.size.Store(size)
	s.allocated = size
	if err := s.checkIndexShape(size); err != nil {
		return err
	}
	ts, off := s.times.LastEntry()
	if ts >= 0 {
		s.maxTS.Store(ts)
		s.offsetOfMaxTS = off
	}
	if size == 0 {
		return nil
	}

	first, err := s.headerAt(0, size)
	if err != nil {
		return err
	}
	s.firstTS = first.MaxTimestamp

	entries := s.offsets.Entries()
	entryOffset, pos := int64(-1), int32(0)
	if entries > 0 {
		entryOffset, pos = s.offsets.Entry(entries - 1)
	}
	s.sinceIndex = size - int64(pos)
	next := s.base
	reach := int64(-1) // see entryFits
	for p := int64(pos); p < size; {
		h, err := s.headerAt(p, size)
		if err != nil {
			return err
		}
		if p == int64(pos) && entries > 0 {
			if reach = entryFits(h.LastOffset(), entryOffset); reach == -2 {
				return corruptAt(s.offsets.Path(), int64(entries-1)*8,
					fmt.Errorf("last index entry names offset %d but the batch at %d ends at %d", entryOffset, pos, h.LastOffset()))
			}
		}
		if p > int64(pos) {
			if err := s.checkFollows(h.BaseOffset, next, p); err != nil {
				return err
			}
			if reach >= 0 {
				if reach = reaches(h.BaseOffset, h.LastOffset(), reach); reach == -2 {
					return corruptAt(s.path, p, fmt.Errorf("no batch ends at the offset %d of the last index entry", entryOffset))
				}
			}
		}
		if err := s.raiseMaxTimestampChecked(h, p); err != nil && s.damaged == nil {
			s.damaged = err
		}
		next = h.NextOffset()
		p += int64(h.Size())
	}
	if reach >= 0 {
		return corruptAt(s.offsets.Path(), int64(entries-1)*8, fmt.Errorf("no batch ends at the offset %d of the last index entry", entryOffset))
	}
	s.next.Store(next)
	return nil
}

// raiseMaxTimestampChecked is raiseMaxTimestamp for the batch with header h
// at pos, which nobody has vouched for: the max timestamp is persisted (the
// time index's final entry) and trusted (retention, lookups by time), so a
// batch that would raise it must pass its CRC check first, and one that
// fails raises nothing; its error is returned. A batch that would not raise
// it is not checked, so that reopening a cleanly closed segment, whose time
// index ends with its max timestamp, computes no CRC.
func (s *Segment) raiseMaxTimestampChecked(h log.BatchHeader, pos int64) error {
	if h.MaxTimestamp <= s.maxTS.Load() {
		return nil
	}
	if err := s.check(pos, h.Size()); err != nil {
		return err
	}
	s.raiseMaxTimestamp(h)
	return nil
}

// Damaged returns the first damaged batch that Open came across while it
// loaded the segment (a batch that claims a larger max timestamp than the
// time index holds, but fails its CRC check), or nil. Open keeps such a
// batch in place, trusting nothing from it: reading it fails with
// ErrCorrupt, and recovery cuts it.
func (s *Segment) Damaged() error { return s.damaged }

// checkIndexShape checks what is cheap to check of trusted indexes: entries
// inside the segment, rising offsets and timestamps at the ends. A full check
// is index.Check; recovery rebuilds instead of checking.
func (s *Segment) checkIndexShape(size int64) error {
	if n := s.offsets.Entries(); n > 0 {
		firstOff, firstPos := s.offsets.Entry(0)
		lastOff, lastPos := s.offsets.Entry(n - 1)
		if firstOff < s.base || lastOff < firstOff || (n > 1 && lastOff == firstOff) ||
			firstPos < 0 || lastPos < firstPos || int64(lastPos) >= size {
			return corruptAt(s.offsets.Path(), 0, fmt.Errorf("offset index of %d entries is not in order or points past the log's %d bytes", n, size))
		}
	}
	if n := s.times.Entries(); n > 0 {
		firstTS, firstOff := s.times.Entry(0)
		lastTS, lastOff := s.times.Entry(n - 1)
		if firstOff < s.base || lastOff < firstOff || lastTS < firstTS || (n > 1 && lastTS == firstTS) {
			return corruptAt(s.times.Path(), 0, fmt.Errorf("time index of %d entries is not in order", n))
		}
	}
	return nil
}
