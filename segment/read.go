package segment

import (
	"fmt"
	"math"

	"github.com/stratalog/strata/index"
	"github.com/stratalog/strata/log"
)

// Read appends to buf[:0] whole batches starting with the first batch whose
// last offset is at least offset, as many as fit in maxBytes — but always
// the first one, however large — and returns the result. The first batch may
// begin before offset: the caller skips its earlier records. An offset past
// the segment's last batch (or in a gap at its end) returns no bytes and no
// error.
//
// Every returned batch is checked: header rules and offsets that follow one
// another each time, its CRC-32C once per process (batches this process
// appended or recovered, or a read already checked, are trusted). Damage is
// ErrCorrupt with the file and position; nothing found damaged is returned.
// A read returns the intact batches before a damaged one without an error:
// the error comes from the read that starts at the damaged batch.
//
// The batches are copied out of the segment's mapping into buf (grown if its
// capacity is short), so they stay valid after the segment is closed. Read
// is safe to call while the segment is appended to or sealed, makes no
// system call, and allocates nothing when buf is large enough.
func (s *Segment) Read(buf []byte, offset int64, maxBytes int) ([]byte, error) {
	batches, err := s.View(offset, maxBytes, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	return append(buf[:0], batches...), nil
}

// View is Read without the copy, and bounded by limit: the batches alias the
// segment's memory mapping, so they are valid only while the segment stays
// open — the caller must hold it (the partition's reference count) until it
// is done with them — and only batches whose last offset is below limit
// are returned (the partition's high watermark; math.MaxInt64 for no
// bound).
func (s *Segment) View(offset int64, maxBytes int, limit int64) ([]byte, error) {
	c, err := s.CursorAt(offset)
	if err != nil {
		return nil, err
	}
	c.SetLimit(limit)
	start := c.pos
	for {
		if c.pos > start {
			// The budget is checked before the next batch is: one past
			// it is neither returned nor CRC-checked.
			size, ok := c.nextSize()
			if !ok || c.pos-start+size > int64(maxBytes) {
				break
			}
		}
		_, b, err := c.Next()
		if err != nil {
			if c.pos > start {
				break // the intact batches before the damage
			}
			return nil, err
		}
		if b == nil {
			break
		}
	}
	return s.data[start:c.pos], nil
}

// check verifies the CRC of the batch of size bytes at pos unless it lies in
// the verified prefix or tail or was checked before, and then extends that
// prefix or tail when the batch adjoins one, or marks the batch checked.
func (s *Segment) check(pos int64, size int) error {
	end := pos + int64(size)
	v := s.verified.Load()
	switch {
	case end <= v:
		return nil
	case !s.tail.holds(pos, end) && !s.marks.has(pos):
		if _, err := log.CheckBatch(s.data[pos:end]); err != nil {
			return corruptAt(s.path, pos, err)
		}
		if (pos != v || !s.verified.CompareAndSwap(v, end)) && !s.tail.extend(pos, end) {
			s.marks.set(pos, int64(len(s.data)))
		}
	case pos == v:
		s.verified.CompareAndSwap(v, end)
	}
	return nil
}

// locate returns the position of the first batch whose last offset is at
// least offset, or -1 if there is none below end. An offset in the run of
// alike batches appended last (see alikeRun) gives its batch's position
// and base offset at once, the batch's header checked against them by the
// cursor's Next. Otherwise locate starts from the offset index's largest
// entry at or below offset and scans batch headers only. The
// batch an entry points at must end at the entry's offset, and later batches
// must follow one another; expect is the offset the found batch must start
// at, or -1 when that is unknown (the batch an entry points at, whose last
// offset the entry vouches for).
//
// The next entry bounds the scan: the batch it points at ends at or after
// offset. Where that batch starts at or before offset (large batches, one
// per entry) it is the one, found with a single header read, while what the
// lookup reads after it is fetched (prefetch). Otherwise the lines up to
// about where offset should lie are fetched at once (only the header lines,
// when the batches seem to be of one size), so that the scan, which reads
// each header's position from the one before, does not wait for one cache
// miss after another.
func (s *Segment) locate(offset, end int64) (pos, expect int64, err error) {
	if b, ok := s.alike.lookup(offset, s.base, end); ok {
		_ = s.prefetch(b.pos, b.size, end, offset-b.base, b.span)
		return b.pos, b.base, nil
	}
	pos, expect = 0, s.base
	entryOffset, checkEntry := s.base-1, false
	slot, entries := s.offsets.Floor(offset)
	if slot >= 0 {
		var p int32
		entryOffset, p = s.offsets.Entry(slot)
		pos, expect, checkEntry = int64(p), -1, true
		if pos < 0 || pos >= end {
			// The entry's batch ends at or below offset, which the caller
			// saw published, so it lies below end: this is damage.
			return -1, -1, corruptAt(s.offsets.Path(), int64(slot)*index.OffsetEntrySize,
				fmt.Errorf("entry for offset %d points at %d, outside the log's %d bytes", entryOffset, pos, end))
		}
	}
	touched := false
	if slot+1 < entries && entryOffset < offset {
		upOffset, up := s.offsets.Entry(slot + 1)
		// A trusted index is only shape-checked at its ends: an entry in
		// the middle that does not lie after pos is damage, which the scan
		// below reports.
		if upPos := int64(up); pos < upPos && upPos < end {
			span := upPos - pos
			if span > 2*int64(s.cfg.IndexIntervalBytes) {
				// Start fetching what a lookup into the batch at upPos
				// reads, before waiting for its header.
				size := end - upPos
				if slot+2 < entries {
					if _, p2 := s.offsets.Entry(slot + 2); int64(p2) > upPos && int64(p2) < end {
						size = int64(p2) - upPos
					}
				}
				_ = s.prefetch(upPos, size, end, offset-entryOffset-1, upOffset-entryOffset)
				base, last, _, ok := s.peek(upPos, end)
				if ok && base <= offset && last == upOffset {
					return upPos, -1, nil
				}
				// Otherwise the scan from pos checks the batches up to
				// it (an index written by Kafka before 4.0 can point at a
				// batch that ends before its entry's offset).
			} else if offsets := upOffset - entryOffset; offsets > 0 {
				// Where offset lies if the bytes spread evenly over the
				// offsets, and a margin.
				guess := pos + span*(offset-entryOffset)/offsets
				if stride := span / offsets; stride >= 128 && span%offsets == 0 {
					// Batches of one size and one record each (the
					// likely reason the span divides exactly) have their
					// headers stride bytes apart: fetch those lines, and
					// all of the batch that should hold offset. Batches
					// of varied sizes get every line.
					_ = touchHeaders(s.data[pos:min(end, upPos+log.BatchHeaderSize, guess+stride+64)], int(stride))
				} else {
					_ = touch(s.data[pos:min(end, upPos+log.BatchHeaderSize, guess+span/8+256)])
				}
				_ = s.marks.has(guess &^ (1<<(markShift+6) - 1)) // and the CRC marks there
				touched = true
			}
		}
	}
	reach := int64(-1) // an offset some batch must end at, for an entry of Kafka before 4.0
	for pos < end {
		if len(s.holes) > 0 {
			if h, ok := s.holeAt(pos); ok {
				// Damage Open stepped over (its header may look fine: a
				// base offset that runs backwards): a lookup past it goes
				// on after it; one of an offset it held fails.
				if offset < h.next {
					return -1, -1, h.err
				}
				pos, expect, checkEntry, reach = h.end, -1, false, -1
				continue
			}
		}
		base, last, size, ok := s.peek(pos, end)
		if !ok {
			// Not a plausible header: let the full check say why.
			_, err := s.headerAt(pos, end)
			if err == nil {
				err = corruptAt(s.path, pos, fmt.Errorf("implausible batch header"))
			}
			return -1, -1, err
		}
		if checkEntry {
			checkEntry = false
			if reach = entryFits(last, entryOffset); reach == -2 {
				return -1, -1, corruptAt(s.path, pos, fmt.Errorf("index entry names last offset %d, the batch here ends at %d", entryOffset, last))
			}
		} else {
			if expect >= 0 && !s.canFollow(base, expect) {
				return -1, -1, s.checkFollows(base, expect, pos)
			}
			if reach >= 0 {
				if reach = reaches(base, last, reach); reach == -2 {
					return -1, -1, corruptAt(s.path, pos, fmt.Errorf("no batch ends at the offset %d of the index entry before it", entryOffset))
				}
			}
		}
		if last >= offset {
			return pos, expect, nil
		}
		if !touched && size < int64(s.cfg.IndexIntervalBytes)/4 {
			// Small batches past the last entry: fetch the lines of an
			// index interval at once.
			touched = true
			_ = touch(s.data[pos:min(end, pos+int64(s.cfg.IndexIntervalBytes)+2*size)])
		}
		expect = last + 1
		pos += size
	}
	return -1, -1, nil
}

// prefetch starts loading, all at once, what a lookup of record k of the
// batch of n records and size bytes at pos reads next: the batch's header,
// its CRC mark, the record positions remembered for it, and the cache lines
// where records k&^(recordStride-1) to k+1 lie if the records are of one
// size. The loads hardly depend on one another, so their cache and TLB
// misses overlap, where the lookup alone would wait for one after another
// (header, mark, positions, records). size, k and n come from the index and
// may be off (a compacted batch, the last batch, damage): nothing is
// trusted or checked here, and a wrong guess costs only loads, none past
// end.
//
//go:noinline
func (s *Segment) prefetch(pos, size, end, k, n int64) byte {
	if pos < 0 || pos >= end {
		return 0
	}
	x := s.data[pos]
	if n < 2*recordStride || k < recordStride || k >= n || size < startsMinBatch {
		return x // no positions are remembered for such a batch
	}
	body := size - log.BatchHeaderSize
	first := pos + log.BatchHeaderSize
	from := max(first, first+body*(k&^(recordStride-1))/n-64)
	if to := min(end, pos+size, first+body*(k+2)/n, from+2048); from < to {
		x ^= touch(s.data[from:to])
	}
	if s.marks.has(pos) {
		x ^= 1
	}
	if e := s.starts.get(pos); e != nil {
		p, _ := e.at(int(k / recordStride))
		x ^= byte(p)
	}
	return x
}

// peek reads the fields of the batch header at pos that a scan needs — base
// offset, size, last offset — checking only that they are plausible (see
// log.PeekHeader: magic 0, 1 or 2, a length that fits before end, a
// non-negative last offset delta). The batches a read returns get the full
// check.
func (s *Segment) peek(pos, end int64) (base, last, size int64, ok bool) {
	if end-pos < log.PrefixSize {
		return 0, 0, 0, false
	}
	base, last, size, ok = log.PeekHeader(s.data[pos:min(end, pos+log.BatchHeaderSize)])
	if !ok || pos+size > end {
		return 0, 0, 0, false
	}
	return base, last, size, true
}

// entryFits checks the batch an offset-index entry points at, which ends at
// last, against the entry's offset: Strata's entries, and Kafka's since 4.0
// (one per batch), name the batch's last offset; Kafka's before 4.0 (one
// per append call, keyed by its last offset, at its first batch) may name a
// later batch's. It returns -1 when the batch ends at the entry's offset,
// the offset a later batch must end at when it ends before, and -2 (damage)
// when it ends past it.
func entryFits(last, entryOffset int64) int64 {
	switch {
	case last == entryOffset:
		return -1
	case last < entryOffset:
		return entryOffset
	}
	return -2
}

// reaches checks a batch of [base, last] that follows, in the scan from an
// entry of Kafka before 4.0, batches ending before reach, the offset some
// batch must end at: it returns -1 once this one does, reach while none
// has, and -2 (damage) if this one passes it.
func reaches(base, last, reach int64) int64 {
	switch {
	case last == reach:
		return -1
	case base > reach || last > reach:
		return -2
	}
	return reach
}
