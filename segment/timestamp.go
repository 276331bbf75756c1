package segment

import (
	"errors"
	"fmt"

	"github.com/stratalog/strata/log"
)

// FindOffsetByTimestamp returns the first record in offset order, at or after
// startOffset and in a batch below limit (see View), whose timestamp is at
// least ts (ms), as Kafka's LogSegment.findOffsetByTimestamp does for
// ListOffsets: the time index narrows the search, then batches whose max
// timestamp reaches ts are searched record by record (decompressed, with dec,
// if compressed). found is false when no such record is in the segment.
// Control batches are passed over; an uncompressed legacy message (magic 1)
// is its own record; a compressed one, whose records this version does not
// read, is log.ErrUnsupportedFormat.
func (s *Segment) FindOffsetByTimestamp(ts, startOffset, limit int64, dec *log.Decoder) (offset, timestamp int64, found bool, err error) {
	if s.maxTS.Load() < ts {
		return -1, -1, false, nil
	}
	_, from := s.times.Lookup(ts)
	from = max(from, startOffset)
	var rec log.Record
	for {
		batches, err := s.View(from, 64<<10, limit)
		if err != nil || len(batches) == 0 {
			return -1, -1, false, err
		}
		for bi := log.NewBatchIter(batches); bi.Next(); { // View checked them
			h, batch := bi.Header(), bi.Batch()
			from = h.NextOffset()
			switch {
			case h.MaxTimestamp < ts || h.IsControl() || h.LastOffset() < startOffset:
				continue
			case h.IsLegacy() && h.Compression() == log.None:
				return h.BaseOffset, h.MaxTimestamp, true, nil
			}
			it, err := dec.Iter(batch, h)
			if err != nil {
				return -1, -1, false, s.recordsError(err)
			}
			for it.Next(&rec) {
				if t := rec.Timestamp.UnixMilli(); t >= ts && rec.Offset >= startOffset {
					return rec.Offset, t, true, nil
				}
			}
			if err := it.Err(); err != nil {
				return -1, -1, false, s.recordsError(err)
			}
		}
	}
}

// recordsError names the segment in an error from reading a batch's
// records: damage is ErrCorrupt; a batch this version cannot read (a legacy
// message, an unknown codec, one too large) is not.
func (s *Segment) recordsError(err error) error {
	if errors.Is(err, log.ErrCorrupt) {
		return corruptAt(s.path, -1, err)
	}
	return fmt.Errorf("segment: reading %s: %w", s.path, err)
}
