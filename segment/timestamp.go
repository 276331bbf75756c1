package segment

import (
	"github.com/stratalog/strata/log"
)

// FindOffsetByTimestamp returns the first record in offset order, at or
// after startOffset and in a batch below limit (see View), whose timestamp
// is at least ts (ms), as Kafka's ListOffsets does (KAFKA.md §7): the time
// index narrows the search, then batches whose max timestamp reaches ts are
// searched record by record. found is false when no such record is in the
// segment.
func (s *Segment) FindOffsetByTimestamp(ts, startOffset, limit int64) (offset, timestamp int64, found bool, err error) {
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
		for p := 0; p < len(batches); {
			h, _ := log.ReadHeader(batches[p:]) // Read checked it
			batch := batches[p : p+h.Size()]
			p += h.Size()
			from = h.NextOffset()
			if h.MaxTimestamp < ts {
				continue
			}
			it, err := log.NewRecordIter(batch)
			if err != nil {
				return -1, -1, false, corruptAt(s.path, -1, err)
			}
			for it.Next(&rec) {
				if t := rec.Timestamp.UnixMilli(); t >= ts && rec.Offset >= startOffset {
					return rec.Offset, t, true, nil
				}
			}
			if err := it.Err(); err != nil {
				return -1, -1, false, corruptAt(s.path, -1, err)
			}
		}
	}
}
