package strata

import (
	"context"
	"fmt"
	"slices"
)

// Commit commits, for every partition the consumer owns, its position: the
// offset after the last record Poll returned from it (or Messages yielded),
// or past what Poll stepped over after that record (a transaction's
// marker, offsets compaction removed), as Kafka's consumers commit; or
// where a Seek put it. Call it after processing them (at-least-once). A
// consumer that was evicted gets ErrFenced: its partitions belong to
// others now, and they will redeliver what it did not commit.
func (c *Consumer) Commit(ctx context.Context) (err error) {
	if err := c.s.checkWritable("commit"); err != nil {
		return err
	}
	defer wrapErr(&err)
	if err := c.checkCommitCall(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	parts := c.heldLocked() // a pending partition's too, once a Seek placed it
	c.mu.Unlock()
	return c.commitConsumed(parts)
}

// CommitOffsets commits explicit offsets (the next offset to read) for
// partitions the consumer owns. A partition of a topic the consumer does
// not subscribe to, or one it does not own, is ErrNotOwner, whatever the
// offset; an offset outside the partition's [start, end] is
// ErrOffsetOutOfRange; either commits nothing.
func (c *Consumer) CommitOffsets(ctx context.Context, offsets map[TopicPartition]int64) (err error) {
	if err := c.s.checkWritable("commit"); err != nil {
		return err
	}
	defer wrapErr(&err)
	if err := c.checkCommitCall(ctx); err != nil {
		return err
	}
	for tp := range offsets {
		if err := c.checkParts("commit", []TopicPartition{tp}); err != nil {
			return err
		}
	}
	return c.commitOffsets(offsets)
}

// commitOffsets is CommitOffsets once the call and the topics are checked.
func (c *Consumer) commitOffsets(offsets map[TopicPartition]int64) error {
	now := c.s.opts.Now()
	commits := make(map[TopicPartition]OffsetAndMetadata, len(offsets))
	for tp, off := range offsets {
		id, err := c.s.checkCommit(tp.Topic, tp.Partition, off)
		if err != nil {
			return err
		}
		commits[tp] = OffsetAndMetadata{Offset: off, CommitTime: now, TopicID: id}
	}
	c.mu.Lock()
	ref := c.ref
	c.mu.Unlock()
	// The group's errors name the commit, the member and the group.
	return c.s.groups.Commit(c.group, ref, commits)
}

// CommitMessages commits, for each partition msgs come from, the offset
// after the highest of them: msgs and everything before them in their
// partitions count as processed, whatever else Poll returned. It is
// franz-go's CommitRecords: it commits what it is given, so a later call
// with lower offsets moves a commit back; commit in order. It fails, and
// commits nothing, like CommitOffsets; a message whose offset its
// partition cannot hold (negative, or at or past the end offset) is
// ErrOffsetOutOfRange, named by its own offset. No messages is a no-op.
func (c *Consumer) CommitMessages(ctx context.Context, msgs ...Message) (err error) {
	defer wrapErr(&err)
	if err := c.checkCommitCall(ctx); err != nil {
		return err
	}
	last := map[TopicPartition]int64{}
	for _, m := range msgs {
		tp := TopicPartition{Topic: m.Topic, Partition: m.Partition}
		if off, ok := last[tp]; !ok || m.Offset > off {
			last[tp] = m.Offset
		}
	}
	offsets := make(map[TopicPartition]int64, len(last))
	for tp, off := range last {
		if err := c.checkParts("commit", []TopicPartition{tp}); err != nil {
			return err
		}
		if err := c.checkMessageOffset(tp, off); err != nil {
			return fmt.Errorf("strata: commit of the message at offset %d of %s: %w", off, tp, err)
		}
		offsets[tp] = off + 1 // below math.MaxInt64: checked
	}
	if len(offsets) == 0 {
		return nil
	}
	return c.commitOffsets(offsets)
}

// checkMessageOffset refuses, with ErrOffsetOutOfRange, the offset of a
// message that tp cannot hold: negative, or at or past its end offset
// (math.MaxInt64 is always past it, so off+1 does not overflow); a message
// just below the start offset (retention removed it) may still be
// committed past.
func (c *Consumer) checkMessageOffset(tp TopicPartition, off int64) error {
	_, p, err := c.s.topicPartition(tp.Topic, tp.Partition)
	if err != nil {
		return err
	}
	start, end := p.StartOffset(), p.HighWatermark()
	if lo := max(start-1, 0); off < lo || off >= end {
		return fmt.Errorf("out of range [%d, %d): %w", lo, end, ErrOffsetOutOfRange)
	}
	return nil
}

// checkCommitCall refuses a commit once ctx has ended or the consumer is
// closed. Commits in the callbacks Close runs are allowed.
func (c *Consumer) checkCommitCall(ctx context.Context) error {
	if err := orBackground(ctx).Err(); err != nil {
		return err
	}
	return c.checkOpen(false)
}

// commitConsumed commits the consumed positions of parts, each with the id
// of the topic it was read from. The positions come from reads, so they are
// not range-checked again: one partition whose start moved past an unread
// position (retention) must not keep the others from committing.
// Partitions of topics deleted (or deleted and created again) meanwhile
// are skipped. A closed store is ErrClosed.
func (c *Consumer) commitConsumed(parts []TopicPartition) error {
	if c.s.closed.Load() {
		return fmt.Errorf("strata: commit of group %q: %w", c.group, ErrClosed)
	}
	now := c.s.opts.Now()
	commits := map[TopicPartition]OffsetAndMetadata{}
	c.mu.Lock()
	for _, tp := range parts {
		if off, ok := c.pos[tp]; ok {
			commits[tp] = OffsetAndMetadata{Offset: off, CommitTime: now, TopicID: c.ids[tp]}
		}
	}
	ref := c.ref
	c.mu.Unlock()
	for tp, om := range commits {
		if t, _, err := c.s.topicPartition(tp.Topic, tp.Partition); err != nil || t.ID() != om.TopicID {
			delete(commits, tp)
		}
	}
	if len(commits) == 0 {
		return nil
	}
	// The group's errors name the commit, the member and the group.
	return c.s.groups.Commit(c.group, ref, commits)
}

// maybeAutoCommit commits what was consumed when AutoCommitInterval has
// passed.
func (c *Consumer) maybeAutoCommit() error {
	if c.opts.AutoCommitInterval <= 0 {
		return nil
	}
	now := c.s.opts.Now()
	c.mu.Lock()
	due := now.Sub(c.lastAuto) >= c.opts.AutoCommitInterval
	if due {
		c.lastAuto = now
	}
	parts := slices.Clone(c.order)
	c.mu.Unlock()
	if !due {
		return nil
	}
	return c.commitConsumed(parts)
}
