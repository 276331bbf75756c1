package strata

import (
	"fmt"
	"math"
	"time"

	"github.com/stratalog/strata/group"
)

// ResetSpec says where ResetOffsets moves a group's offsets, as
// kafka-consumer-groups --reset-offsets does: ToEarliest, ToLatest,
// ToTime(t), ToOffset(n) or ShiftBy(n).
type ResetSpec struct {
	kind  resetKind
	value int64
}

type resetKind int8

const (
	resetEarliest resetKind = iota + 1
	resetLatest
	resetTime
	resetOffset
	resetShift
)

// The reset specs.
var (
	// ToEarliest moves to each partition's start offset.
	ToEarliest = ResetSpec{kind: resetEarliest}
	// ToLatest moves to each partition's end offset: skip everything.
	ToLatest = ResetSpec{kind: resetLatest}
)

// ToTime moves to the first offset whose record timestamp is at or after t
// (the end offset where there is none).
func ToTime(t time.Time) ResetSpec { return ResetSpec{kind: resetTime, value: t.UnixMilli()} }

// ToOffset moves every partition to offset n, clamped to its [start, end].
func ToOffset(n int64) ResetSpec { return ResetSpec{kind: resetOffset, value: n} }

// ShiftBy moves each committed offset by n (negative: back), clamped to the
// partition's [start, end]; a partition with no commit shifts from its start.
func ShiftBy(n int64) ResetSpec { return ResetSpec{kind: resetShift, value: n} }

// OffsetChange is one line of a reset plan.
type OffsetChange struct {
	Partition int
	From      int64 // the committed offset before, -1 if none
	To        int64
}

// ResetOffsets moves a group's committed offsets on every partition of a
// topic to spec and returns the plan, as kafka-consumer-groups
// --reset-offsets does. With dryRun it only returns the plan. The group must
// have no active consumers (ErrGroupActive) nor members over the wire
// (ErrGroupClaimed), so that none of them overwrites the reset with its
// own commit.
func (s *Store) ResetOffsets(groupName, topicName string, spec ResetSpec, dryRun bool) (_ []OffsetChange, err error) {
	if !dryRun {
		if err := s.checkWritable("reset offsets"); err != nil {
			return nil, err
		}
	}
	defer wrapErr(&err)
	t, err := s.topic(topicName)
	if err != nil {
		return nil, err
	}
	if spec.kind < resetEarliest || spec.kind > resetShift {
		return nil, fmt.Errorf("strata: reset spec %d is not one of ToEarliest, ToLatest, ToTime, ToOffset, ShiftBy: %w", spec.kind, ErrInvalidConfig)
	}
	if err := group.ValidateGroupID(groupName); err != nil {
		return nil, fmt.Errorf("strata: resetting group %q: %w", groupName, err)
	}
	if len(s.groups.Members(groupName)) > 0 {
		return nil, fmt.Errorf("strata: resetting group %q: %w", groupName, ErrGroupActive)
	}
	if s.groups.Claimed(groupName) {
		return nil, fmt.Errorf("strata: resetting group %q: %w", groupName, ErrGroupClaimed)
	}
	plan := make([]OffsetChange, 0, t.NumPartitions())
	offsets := map[TopicPartition]OffsetAndMetadata{}
	now := s.opts.Now()
	for i, p := range t.Partitions() {
		start, end := p.StartOffset(), p.HighWatermark()
		ch := OffsetChange{Partition: i, From: -1}
		om, ok := s.groups.Committed(groupName, topicName, i)
		if ok {
			ch.From = om.Offset
		}
		switch spec.kind {
		case resetEarliest:
			ch.To = start
		case resetLatest:
			ch.To = end
		case resetTime:
			off, _, found, err := p.OffsetForTimestamp(spec.value)
			if err != nil {
				return nil, err
			}
			ch.To = end
			if found {
				ch.To = off
			}
		case resetOffset:
			ch.To = spec.value
		case resetShift:
			from := start
			if ok {
				from = om.Offset
			}
			ch.To = addClamped(from, spec.value)
		}
		ch.To = min(max(ch.To, start), end)
		plan = append(plan, ch)
		offsets[TopicPartition{Topic: topicName, Partition: i}] = OffsetAndMetadata{Offset: ch.To, Metadata: om.Metadata, CommitTime: now}
	}
	if dryRun {
		return plan, nil
	}
	if err := s.groups.Commit(groupName, group.MemberRef{}, offsets); err != nil {
		return nil, err
	}
	return plan, nil
}

// addClamped returns a + b, saturated at the ends of int64 instead of
// wrapping around.
func addClamped(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}
