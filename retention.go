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
// than Retention (see package retention). The store also does this every
// Options.RetentionCheckInterval. Readers of a deleted segment finish
// undisturbed; its files go when the last of them lets go.
func (s *Store) EnforceRetention(ctx context.Context) (int, error) {
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
	return total, errors.Join(errs...)
}

// DeleteRecords moves a partition's start offset forward to offset, as
// Kafka's DeleteRecords does: records below it can no longer be read
// (ErrOffsetOutOfRange), and the segments wholly below it are deleted at
// the next retention pass. The new start offset is written to disk before
// the call returns. An offset past the end is ErrOffsetOutOfRange; moving
// backwards is a no-op.
func (s *Store) DeleteRecords(topicName string, part int, offset int64) error {
	p, err := s.partition(topicName, part)
	if err != nil {
		return err
	}
	if err := p.DeleteRecords(offset); err != nil {
		return fmt.Errorf("strata: %w", err)
	}
	return nil
}

// startRetention runs EnforceRetention every interval until Close.
func (s *Store) startRetention(interval time.Duration) {
	s.stop = make(chan struct{})
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				if _, err := s.EnforceRetention(context.Background()); err != nil && !errors.Is(err, ErrClosed) {
					s.opts.Logger.Error("strata: retention failed", "err", err)
				}
			}
		}
	}()
}
