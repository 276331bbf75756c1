// Package retention decides which of a partition's oldest segments may be
// deleted, with Kafka's rules (UnifiedLog.deleteOldSegments and
// deletableSegments, core/src/main/scala/kafka/log/UnifiedLog.scala). It is
// pure policy: no files, no clock, no goroutines.
//
// # Rules
//
// Only whole segments go, oldest first, and the walk stops at the first
// segment that must stay. Three reasons, applied in this order as Kafka's
// deleteOldSegments does, each to what the previous ones left:
//
//   - Start offset: a segment whose successor starts at or below the
//     partition's start offset holds only records DeleteRecords removed.
//   - Size: while the partition is larger than RetentionBytes, its oldest
//     segments go as long as the partition stays at or above the limit
//     without them.
//   - Time: a segment whose largest record timestamp is strictly older than
//     now − Retention goes.
//
// The last (active) segment may go too when it is not empty: the partition
// rolls first, so it always keeps one segment. An empty last segment stays.
//
// Time is record time. A segment holding a timestamp in the future would
// block itself and every later segment (Kafka's KAFKA-6482); Strata avoids
// that at the source: partitions refuse records stamped further ahead of the
// clock than MaxTimestampSkew (1 hour by default, as Kafka 4.0's
// message.timestamp.after.max.ms).
package retention

// Segment summarises one segment for the policy.
type Segment struct {
	Base         int64 // base offset
	Bytes        int64 // size of the .log file
	MaxTimestamp int64 // largest record timestamp in ms, -1 if none
}

// Policy is a partition's retention configuration.
type Policy struct {
	// Retention in milliseconds; negative means no time limit.
	RetentionMs int64
	// RetentionBytes per partition; negative means no size limit.
	RetentionBytes int64
	// StartOffset is the partition's start offset (DeleteRecords).
	StartOffset int64
	// DeleteByTimeAndSize is false for compact-only topics, which Kafka
	// trims by start offset only.
	DeleteByTimeAndSize bool
}

// Reason says why a segment may go.
type Reason int8

// The reasons, in the order they are applied.
const (
	BelowStartOffset Reason = iota + 1
	OverSize
	Expired
)

// String names the reason.
func (r Reason) String() string {
	switch r {
	case BelowStartOffset:
		return "below the start offset"
	case OverSize:
		return "over the size limit"
	case Expired:
		return "expired"
	}
	return "unknown"
}

// Deletable returns, for the oldest segments that may be deleted, why each
// may go: segs[i] may go for reasons[i], for i < len(reasons). segs are the
// partition's segments, oldest first, the last one active; nowMs is the
// current time in milliseconds.
func Deletable(segs []Segment, nowMs int64, p Policy) (reasons []Reason) {
	n := prefix(segs, func(i int) bool {
		return i+1 < len(segs) && segs[i+1].Base <= p.StartOffset
	})
	reasons = appendN(reasons, BelowStartOffset, n)
	if !p.DeleteByTimeAndSize {
		return reasons
	}

	if p.RetentionBytes >= 0 {
		rest := segs[len(reasons):]
		var total int64
		for _, s := range rest {
			total += s.Bytes
		}
		if diff := total - p.RetentionBytes; diff >= 0 {
			n := prefix(rest, func(i int) bool {
				if diff-rest[i].Bytes < 0 {
					return false
				}
				diff -= rest[i].Bytes
				return true
			})
			reasons = appendN(reasons, OverSize, n)
		}
	}

	if p.RetentionMs >= 0 {
		rest := segs[len(reasons):]
		n := prefix(rest, func(i int) bool {
			return nowMs-rest[i].MaxTimestamp > p.RetentionMs
		})
		reasons = appendN(reasons, Expired, n)
	}
	return reasons
}

// prefix counts the segments from the first for which ok holds, stopping at
// the first for which it does not; an empty last segment always stays.
func prefix(segs []Segment, ok func(i int) bool) int {
	for i := range segs {
		last := i == len(segs)-1
		if (last && segs[i].Bytes == 0) || !ok(i) {
			return i
		}
	}
	return len(segs)
}

func appendN(rs []Reason, r Reason, n int) []Reason {
	for range n {
		rs = append(rs, r)
	}
	return rs
}
