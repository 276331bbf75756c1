package compaction

import (
	"errors"
	"fmt"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// BuildMap puts into m the offset of every keyed record in the dirty section
// [firstDirty, uncleanable), reading segs in order (segments wholly outside
// the section are skipped, so the caller may pass the whole log). m should
// be empty (Reset) at the start of a round. Control batches are not mapped:
// their keys are markers, not record keys.
//
// It returns end, the offset up to which the map is complete: every keyed
// record in [firstDirty, end) is in m. end is uncleanable when the whole
// section fit; when the map fills up, it is the offset of the first record
// that did not fit, and the next round maps from there (end is the cleaner's
// next checkpoint, Kafka's firstDirtyOffset). It moves past key-less batches
// too, so a section without keys is never mapped again (KAFKA-8764). Clean
// keeps every record at or after end as it is.
//
// When the record at firstDirty itself does not fit, so that the round would
// make no progress, BuildMap returns firstDirty and ErrMapTooSmall (a key
// that does not fit after key-less records ends the map there instead, and
// the next round reports it). If firstDirty ≥ uncleanable there is nothing
// to map and it returns firstDirty.
//
// Compressed batches are read with decompressLimit as their Decoder's
// Limit (zero: log.DefaultDecompressLimit); one that decompresses past it
// is copied as it is, unmapped. The segments must stay open during the
// call; m copies the keys.
func BuildMap(m *OffsetMap, segs []*segment.Segment, firstDirty, uncleanable int64, decompressLimit int) (end int64, err error) {
	return BuildMapAborted(m, segs, firstDirty, uncleanable, decompressLimit, nil)
}

// BuildMapAborted is BuildMap that leaves out of the map the records of
// aborted transactions, as Kafka's cleaner does: those named by aborted
// (the partition's .txnindex entries, such as Partition.AbortedTxns
// returns) or by the .txnindex of segs. Mapped, an aborted record would
// pass for its key's latest and have the committed record it did not
// replace removed. Batches of other transactions are mapped as data: the
// caller keeps uncleanable at or below the last stable offset, so that
// every transaction below it is complete.
func BuildMapAborted(m *OffsetMap, segs []*segment.Segment, firstDirty, uncleanable int64, decompressLimit int, aborted []segment.AbortedTxn) (end int64, err error) {
	if m == nil {
		return firstDirty, fmt.Errorf("compaction: no offset map: %w", ErrInvalid)
	}
	if firstDirty >= uncleanable {
		return firstDirty, nil
	}
	var r log.Record
	dec := log.Decoder{Limit: decompressLimit}
	txns := newTxnState(withSegmentTxns(aborted, segs))
	for _, s := range segs {
		if s.NextOffset() <= firstDirty || s.Size() == 0 {
			continue
		}
		if s.Base() >= uncleanable {
			break
		}
		c, err := s.CursorAt(firstDirty)
		if err != nil {
			return firstDirty, fmt.Errorf("compaction: mapping %s: %w", s.Path(), err)
		}
		for {
			h, b, err := c.Next()
			if err != nil {
				return firstDirty, fmt.Errorf("compaction: mapping %s: %w", s.Path(), err)
			}
			if b == nil {
				break
			}
			if h.BaseOffset >= uncleanable {
				return uncleanable, nil
			}
			if h.IsControl() {
				if typ, empty, ok := markerType(&dec, b, h); ok {
					txns.onMarker(h, typ, empty)
				}
				continue
			}
			if txns.onBatch(h) {
				continue // aborted: never a key's latest
			}
			it, err := dec.Iter(b, h)
			if unreadable(err) {
				continue // kept as it is by Clean
			}
			if err != nil {
				return firstDirty, fmt.Errorf("compaction: mapping %s at offset %d: %w", s.Path(), h.BaseOffset, err)
			}
			for it.Next(&r) {
				if r.Key == nil || r.Offset < firstDirty || r.Offset >= uncleanable {
					continue
				}
				if !m.Put(r.Key, r.Offset) {
					if r.Offset == firstDirty {
						return firstDirty, fmt.Errorf("compaction: key of %d bytes at offset %d, map budget %d bytes: %w",
							len(r.Key), r.Offset, m.Budget(), ErrMapTooSmall)
					}
					return r.Offset, nil
				}
			}
			if err := it.Err(); err != nil {
				return firstDirty, fmt.Errorf("compaction: mapping %s at offset %d: %w", s.Path(), h.BaseOffset, err)
			}
		}
	}
	return uncleanable, nil
}

// unreadable reports whether err says a batch is valid data whose records
// this version cannot read: a legacy message (magic 0 or 1), a codec it
// does not know, or records that decompress past the limit. Such a batch
// is not mapped, and Clean keeps it as it is.
func unreadable(err error) bool {
	return errors.Is(err, log.ErrUnsupportedFormat) || errors.Is(err, log.ErrUnsupportedCompression) || errors.Is(err, log.ErrTooLarge)
}
