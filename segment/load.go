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
// report, and recorded for Damaged. A header that does not read (a damaged
// length or magic, offsets that run backwards) is stepped over to the next
// batch that reads (see resync): the bytes between are a hole, which reads
// report when they reach it and lookups jump, so the batches after it stay
// readable (until a recovery, which cuts the file at the hole); when nothing
// after the damage reads, load fails. The indexes get a shape
// check; a failure is ErrCorrupt, and the caller recovers the segment
// instead.
func (s *Segment) load() error {
	size, err := s.log.Size()
	if err != nil {
		return fmt.Errorf("segment: %s: %w", s.path, err)
	}
	return s.loadSized(size)
}

// loadSized is load of a .log file of size bytes.
func (s *Segment) loadSized(size int64) error {
	s.size.Store(size)
	s.tail.reset(size)
	s.allocated, s.zeroed = size, size
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
	afterHole := false // the batch at p follows a hole: its offsets only have to rise
	for p := int64(pos); p < size; {
		h, err := s.headerAt(p, size)
		switch {
		case err != nil:
		case afterHole && h.BaseOffset < next:
			err = corruptAt(s.path, p, fmt.Errorf("base offset %d after a hole, below %d", h.BaseOffset, next))
		case p > int64(pos) && !afterHole:
			err = s.checkFollows(h.BaseOffset, next, p)
		}
		afterHole = false
		if err != nil && firstNonZero(s.data[p:min(size, p+log.BatchHeaderSize)]) < 0 {
			// Zeros, as a file grown ahead of its appends leaves them: not
			// a file closed cleanly; recovery cuts them.
			return err
		}
		if err != nil {
			q := s.resync(p, size, next)
			if q == size {
				// Nothing reads after the damage: let recovery cut it
				// (the caller keeps the segments after this one).
				return err
			}
			base, _, _, _ := s.peek(q, size) // resync checked it
			s.holes = append(s.holes, hole{pos: p, end: q, next: base, err: err})
			if s.damaged == nil {
				s.damaged = err
			}
			reach = -1 // what the hole held cannot be checked against the entry
			p, afterHole = q, true
			continue
		}
		if p == int64(pos) && entries > 0 {
			if reach = entryFits(h.LastOffset(), entryOffset); reach == -2 {
				return corruptAt(s.offsets.Path(), int64(entries-1)*8,
					fmt.Errorf("last index entry names offset %d but the batch at %d ends at %d", entryOffset, pos, h.LastOffset()))
			}
		}
		if p > int64(pos) && reach >= 0 {
			if reach = reaches(h.BaseOffset, h.LastOffset(), reach); reach == -2 {
				return corruptAt(s.path, p, fmt.Errorf("no batch ends at the offset %d of the last index entry", entryOffset))
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
	s.raiseMaxTimestamp(&h)
	return nil
}

// Damaged returns the first damage that Open came across while it loaded
// the segment, or nil: a header that did not read, which Open stepped over
// (a hole), or a batch that claims a larger max timestamp than the time
// index holds but fails its CRC check. Open keeps the damage in place,
// trusting nothing from it: reading it fails with ErrCorrupt, and recovery
// cuts the segment at it (with every batch after it in this file, so
// nothing should be appended after damage: the partition rolls instead).
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

// hole is a damaged stretch of a segment's log that Open found and stepped
// over: [pos, end) holds nothing that reads as a batch, and the batch that
// starts at end, with base offset next, reads. The offsets below next that
// no batch before the hole holds were in the hole: reading them is err.
type hole struct {
	pos, end int64
	next     int64
	err      error
}

// resync returns the first position after p, up to end, at which a run of
// batches that read — headers valid, offsets rising from minBase on, the
// first one's CRC matching — goes on to end exactly: where reading can go
// on after damage at p. It returns end if there is none.
func (s *Segment) resync(p, end, minBase int64) int64 {
	// The batch starts a failed chain walked: a later candidate that is
	// one of them, or whose chain reaches one, fails as that chain did, so
	// every position is walked once and the search stays linear.
	var failed map[int64]bool
	for q := p + 1; q+log.PrefixSize <= end; q++ {
		if failed[q] {
			continue
		}
		base, _, size, ok := s.peek(q, end)
		if !ok || base < minBase {
			continue
		}
		if _, err := log.CheckBatch(s.data[q : q+size]); err != nil {
			continue
		}
		if failed == nil {
			failed = map[int64]bool{}
		}
		if s.chainEnds(q, end, failed) {
			return q
		}
	}
	return end
}

// chainEnds reports whether the batches from q on read (headers valid,
// offsets rising) up to end exactly. A chain that fails adds the batch
// starts it walked to failed, and one that reaches a start in failed
// fails there.
func (s *Segment) chainEnds(q, end int64, failed map[int64]bool) bool {
	var walked []int64
	next := int64(-1)
	for q < end {
		h, err := s.headerAt(q, end)
		if err != nil || h.BaseOffset < next || failed[q] {
			break
		}
		walked = append(walked, q)
		next = h.NextOffset()
		q += int64(h.Size())
	}
	if q == end {
		return true
	}
	for _, w := range walked {
		failed[w] = true
	}
	return false
}

// holeAt returns the hole that starts at pos, and false if none does.
func (s *Segment) holeAt(pos int64) (hole, bool) {
	for _, h := range s.holes {
		if h.pos == pos {
			return h, true
		}
	}
	return hole{}, false
}
