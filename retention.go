package strata

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultRetentionCheckInterval is how often the store applies retention in
// the background, as Kafka's log.retention.check.interval.ms.
const DefaultRetentionCheckInterval = 5 * time.Minute

// EnforceRetention applies every topic's retention now (by the store's
// clock, Options.Now) and returns how many segments it deleted: per
// partition, whole segments only, oldest first, those wholly below the start
// offset, those beyond RetentionBytes, and those whose newest record is older
// than Retention (see package retention). It also forgets the
// transactional ids idle for longer than Options.TransactionalIDExpiration.
// The store also does this every Options.RetentionCheckInterval. Readers
// of a deleted segment finish undisturbed; its files go when the last of
// them lets go.
func (s *Store) EnforceRetention(ctx context.Context) (_ int, err error) {
	if err := s.checkWritable("enforce retention"); err != nil {
		return 0, err
	}
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	if s.closed.Load() {
		return 0, ErrClosed
	}
	now := s.opts.Now()
	total := 0
	var errs []error
	for _, t := range *s.topics.Load() {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, err := t.EnforceRetention(now)
		total += n
		errs = append(errs, err)
	}
	errs = append(errs, s.txns.expireIDs(now))
	return total, errors.Join(errs...)
}

// EnforceTopicRetention is EnforceRetention for one topic: it applies the
// topic's retention now, by the store's clock, and returns how many
// segments it deleted. An unknown topic is ErrUnknownTopic.
func (s *Store) EnforceTopicRetention(ctx context.Context, topicName string) (_ int, err error) {
	if err := s.checkWritable("enforce retention"); err != nil {
		return 0, err
	}
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	t, err := s.internalTopic(topicName)
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return t.EnforceRetention(s.opts.Now())
}

// DeleteRecords moves a partition's start offset forward to offset, as
// Kafka's DeleteRecords does: records below it can no longer be read
// (ErrOffsetOutOfRange), and the segments wholly below it are deleted at
// the next retention pass. The new start offset is written to disk before
// the call returns. An offset past the end is ErrOffsetOutOfRange; moving
// backwards is a no-op.
func (s *Store) DeleteRecords(topicName string, part int, offset int64) (err error) {
	if err := s.checkWritable("delete records"); err != nil {
		return err
	}
	defer wrapErr(&err)
	p, err := s.partition(topicName, part)
	if err != nil {
		return err
	}
	if err := p.DeleteRecords(offset); err != nil {
		return fmt.Errorf("strata: %w", err)
	}
	return nil
}

// startBackground runs retention every RetentionCheckInterval and the
// cleaner every CleanerInterval, until Close (see background).
func (s *Store) startBackground() {
	s.bg = &background{}
	report := func(job string, err error) {
		if err != nil && !errors.Is(err, ErrClosed) {
			s.opts.Logger.Error("strata: background "+job+" failed", "err", err)
		}
	}
	s.bg.every(s.opts.RetentionCheckInterval, func() {
		_, err := s.EnforceRetention(context.Background())
		report("retention", err)
	})
	s.bg.every(s.opts.CleanerInterval, func() {
		_, err := s.compactAll(context.Background())
		report("cleaning", err)
	})
}
