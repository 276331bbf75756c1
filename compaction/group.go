package compaction

import (
	"math"

	"github.com/stratalog/strata/index"
	"github.com/stratalog/strata/segment"
)

// Span is a run of segments, segs[Start:End], that Clean turns into one.
type Span struct{ Start, End int }

// Group splits the segments of a round into runs that Clean each turns into
// one segment, as Kafka's Cleaner.groupSegmentsBySize does
// (core/src/main/scala/kafka/log/LogCleaner.scala).
// The round covers every segment with a base offset below end (BuildMap's
// result), the clean section included; segs is the log's segments, oldest
// first, and the segments from end on are left out. A segment joins the run
// before it while
//
//   - their .log files together hold at most maxBytes (default
//     segment.DefaultMaxBytes if not positive),
//   - their offset-index and time-index entries, plus one per segment, fit
//     index files of maxIndexBytes (default segment.DefaultMaxIndexBytes;
//     the time index keeps one entry spare), and
//   - its last offset is within math.MaxInt32 of the run's base offset, so
//     that relative offsets fit the indexes (KAFKA-4451); an empty segment
//     is not held to this.
//
// Runs are consecutive, in order, and cover the segments of the round.
func Group(segs []SegmentInfo, end int64, maxBytes int64, maxIndexBytes int) []Span {
	if maxBytes <= 0 {
		maxBytes = segment.DefaultMaxBytes
	}
	if maxIndexBytes <= 0 {
		maxIndexBytes = segment.DefaultMaxIndexBytes
	}
	n := 0
	for n < len(segs) && segs[n].Base < end {
		n++
	}
	var spans []Span
	for start := 0; start < n; {
		first := segs[start]
		bytes := first.Bytes
		offsets := first.OffsetIndexEntries + 1
		times := first.TimeIndexEntries + 1
		i := start + 1
		for ; i < n; i++ {
			s := segs[i]
			if bytes+s.Bytes > maxBytes ||
				(offsets+s.OffsetIndexEntries+1)*index.OffsetEntrySize > maxIndexBytes ||
				(times+s.TimeIndexEntries+2)*index.TimeEntrySize > maxIndexBytes ||
				(s.Bytes > 0 && s.Next-1-first.Base > math.MaxInt32) {
				break
			}
			bytes += s.Bytes
			offsets += s.OffsetIndexEntries + 1
			times += s.TimeIndexEntries + 1
		}
		spans = append(spans, Span{Start: start, End: i})
		start = i
	}
	return spans
}
