package group

import "fmt"

// OffsetReset is Kafka's auto.offset.reset: where a consumer starts on a
// partition when it has no committed offset, or its committed offset is
// out of the partition's range (retention or compaction removed the
// records it pointed at).
type OffsetReset int

// The reset policies. The zero value is Kafka's default, latest.
const (
	// ResetLatest starts at the end of the partition: only records
	// appended from now on are read ("latest", ListOffsets −1).
	ResetLatest OffsetReset = iota
	// ResetEarliest starts at the first retained record ("earliest",
	// ListOffsets −2).
	ResetEarliest
	// ResetNone fails with [ErrNoOffset] ("none").
	ResetNone
)

// String returns the policy's name in Kafka's configuration: "latest",
// "earliest" or "none".
func (r OffsetReset) String() string {
	switch r {
	case ResetLatest:
		return "latest"
	case ResetEarliest:
		return "earliest"
	case ResetNone:
		return "none"
	}
	return fmt.Sprintf("OffsetReset(%d)", int(r))
}

// Position returns the offset a consumer starts reading tp from, given
// its committed offset (ok is false when there is none) and the
// partition's range [start, end): start is the first retained offset, end
// the next one to be assigned. A committed offset in [start, end] is
// used as it is (end means "caught up"); otherwise the policy decides.
// ResetNone returns an error wrapping [ErrNoOffset] that says which case
// it was; an unknown policy behaves as ResetNone.
func (r OffsetReset) Position(tp TopicPartition, committed int64, ok bool, start, end int64) (int64, error) {
	if ok && committed >= start && committed <= end {
		return committed, nil
	}
	switch r {
	case ResetLatest:
		return end, nil
	case ResetEarliest:
		return start, nil
	}
	if !ok {
		return 0, fmt.Errorf("group: %s has no committed offset: %w", tp, ErrNoOffset)
	}
	return 0, fmt.Errorf("group: committed offset %d of %s out of range [%d, %d): %w", committed, tp, start, end, ErrNoOffset)
}

// Lag returns how many records a consumer at position is behind the end
// of its partition: end − position, and 0 for a position at or past the
// end. Kafka's tools report end − committed offset; the consumer's
// records-lag metric uses its fetch position.
func Lag(position, end int64) int64 {
	return max(end-position, 0)
}
