package strata

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stratalog/strata/compaction"
	"github.com/stratalog/strata/topic"
)

// DefaultCleanerInterval is how often the store cleans compacted topics, as
// Kafka's log.cleaner.backoff.ms.
const DefaultCleanerInterval = 15 * time.Second

// CompactionStats say what cleanings did: bytes and records read and
// written, tombstones and records removed.
type CompactionStats = compaction.Stats

// Compact cleans the partitions of a compacted topic that are due now — by
// the topic's MinCleanableDirtyRatio, or a record older than its
// MaxCompactionLag — keeping the latest record of every key (and each
// tombstone until DeleteRetention after the cleaning that first copied it),
// with every offset unchanged. Readers are not disturbed; the active segment
// is never cleaned. The store also does this every CleanerInterval. A topic
// that is not compacted (CleanupDelete) is ErrNotCompacted. It takes the
// store's own __consumer_offsets too (ConsumerOffsetsTopic), once the
// first commit has created it.
func (s *Store) Compact(ctx context.Context, topicName string) (_ CompactionStats, err error) {
	if err := s.checkWritable("compact"); err != nil {
		return CompactionStats{}, err
	}
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	t, err := s.internalTopic(topicName)
	if err != nil {
		return CompactionStats{}, err
	}
	if !t.Compacted() {
		return CompactionStats{}, fmt.Errorf("strata: compacting %q, whose cleanup policy is %s: %w", topicName, t.Config().CleanupPolicy, ErrNotCompacted)
	}
	if err := ctx.Err(); err != nil {
		return CompactionStats{}, err
	}
	return s.compactTopic(t)
}

// compactTopic cleans the partitions of compacted topic t that are due;
// TransactionStateTopic's once the markers its records decide are durable
// (see txnCoordinator.compactLog).
func (s *Store) compactTopic(t *topic.Topic) (CompactionStats, error) {
	if t.Name() != TransactionStateTopic {
		return t.Compact(s.opts.Now(), s.opts.CleanerBufferBytes)
	}
	var st CompactionStats
	err := s.txns.compactLog(func() error {
		var err error
		st, err = t.Compact(s.opts.Now(), s.opts.CleanerBufferBytes)
		return err
	})
	return st, err
}

// compactAll cleans every compacted topic that is due.
func (s *Store) compactAll(ctx context.Context) (CompactionStats, error) {
	var total CompactionStats
	var errs []error
	for _, t := range *s.topics.Load() {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		if s.closed.Load() {
			return total, ErrClosed
		}
		st, err := s.compactTopic(t)
		total.Add(st)
		errs = append(errs, err)
	}
	return total, errors.Join(errs...)
}
