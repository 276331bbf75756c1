package strata

import (
	"fmt"
	"maps"
	"slices"
)

// Seek moves the consumer's position in a partition it owns to offset: the
// next Poll returns the partition's records from there on, and Commit
// commits it until Poll moves on. It works in OnAssigned (to start a
// partition elsewhere than its committed offset) and on a partition
// waiting for a start position (Poll's ErrNoOffset under ResetNone). The
// offset must lie in the partition's [start, end] (ErrOffsetOutOfRange,
// with the range); a partition the consumer does not own is ErrNotOwner.
// Either changes nothing.
func (c *Consumer) Seek(tp TopicPartition, offset int64) (err error) {
	defer wrapErr(&err)
	return c.seek(tp, func(start, end int64) (int64, error) {
		if offset < start || offset > end {
			return 0, fmt.Errorf("strata: seek of %s to offset %d out of range [%d, %d]: %w", tp, offset, start, end, ErrOffsetOutOfRange)
		}
		return offset, nil
	})
}

// SeekTo moves the consumer's position in a partition it owns as Seek
// does, to the offset spec names: Earliest (the start offset), Latest (the
// end: only records appended from now on), AtTime(t), the first record
// whose timestamp is at or after t, as ListOffsets finds it, or
// MaxTimestamp; the end when no record matches. The offsets are those of
// the consumer's Isolation: under ReadCommitted, Latest is the last stable
// offset. A partition the consumer does not own is ErrNotOwner, the zero
// OffsetSpec ErrInvalidConfig.
func (c *Consumer) SeekTo(tp TopicPartition, spec OffsetSpec) (err error) {
	defer wrapErr(&err)
	return c.seek(tp, func(start, end int64) (int64, error) {
		if spec.kind == specNone {
			return 0, fmt.Errorf("strata: seek of %s: %s: %w", tp, errZeroSpec, ErrInvalidConfig)
		}
		off, err := c.s.listOffsets(c.opts.Isolation, tp.Topic, tp.Partition, spec)
		if err == nil && off < 0 { // AtTime, MaxTimestamp: no record matches
			off, err = c.s.listOffsets(c.opts.Isolation, tp.Topic, tp.Partition, Latest)
		}
		if err != nil {
			return 0, err
		}
		return min(max(off, start), end), nil
	})
}

// seek sets tp's position to what to returns, given the partition's range.
func (c *Consumer) seek(tp TopicPartition, to func(start, end int64) (int64, error)) error {
	c.mu.Lock()
	err := c.checkOpenLocked(false)
	owned := c.ownsLocked(tp)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if !owned {
		return fmt.Errorf("strata: seek of %s by consumer %q of group %q: %w", tp, c.MemberID(), c.group, ErrNotOwner)
	}
	t, p, err := c.s.topicPartition(tp.Topic, tp.Partition)
	if err != nil {
		return err
	}
	off, err := to(p.StartOffset(), p.HighWatermark())
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ownsLocked(tp) {
		// Revoked meanwhile, by a Poll on another goroutine.
		return fmt.Errorf("strata: seek of %s by consumer %q of group %q: %w", tp, c.ref.MemberID, c.group, ErrNotOwner)
	}
	c.pos[tp], c.ids[tp] = off, t.ID()
	c.poke()
	return nil
}

// Pause stops the consumer from fetching parts: Poll returns nothing from
// them (records it already returned are the caller's), while it still
// checks in with the group, so the consumer keeps its partitions. Paused
// partitions stay paused until Resume, whatever the group does: one that
// is revoked and assigned again later comes back paused, as with franz-go's
// PauseFetchPartitions. A partition need not be owned to be paused, but
// its topic must be one the consumer subscribes to (else ErrNotOwner) and
// its number not negative (ErrUnknownPartition); a bad one pauses nothing.
func (c *Consumer) Pause(parts ...TopicPartition) (err error) {
	defer wrapErr(&err)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkOpenLocked(false); err != nil {
		return err
	}
	if err := c.checkParts("pause", parts); err != nil {
		return err
	}
	for _, tp := range parts {
		c.paused[tp] = true
	}
	return nil
}

// Resume lets the consumer fetch parts again, from where it stopped.
// Resuming a partition that is not paused does nothing; bad partitions
// are refused as by Pause.
func (c *Consumer) Resume(parts ...TopicPartition) (err error) {
	defer wrapErr(&err)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkOpenLocked(false); err != nil {
		return err
	}
	if err := c.checkParts("resume", parts); err != nil {
		return err
	}
	for _, tp := range parts {
		delete(c.paused, tp)
	}
	c.poke()
	return nil
}

// Paused returns the paused partitions, owned or not, sorted.
func (c *Consumer) Paused() []TopicPartition {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.SortedFunc(maps.Keys(c.paused), TopicPartition.Compare)
}

// checkParts refuses partitions of topics the consumer does not subscribe
// to, and negative partition numbers.
func (c *Consumer) checkParts(verb string, parts []TopicPartition) error {
	for _, tp := range parts {
		if !slices.Contains(c.topics, tp.Topic) {
			return fmt.Errorf("strata: %s of %s: consumer of group %q subscribes to %q only: %w", verb, tp, c.group, c.topics, ErrNotOwner)
		}
		if tp.Partition < 0 {
			return fmt.Errorf("strata: %s of %s: a partition number is 0 or more: %w", verb, tp, ErrUnknownPartition)
		}
	}
	return nil
}
