package strata_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// TestCreatePartitionsUnderMaintenance grows a compacted topic while
// appends write to every partition, retention and the cleaner run over
// it, its retention is altered, and a group's consumer reads it: nothing
// fails, and the consumer reads every acknowledged record, those of the
// new partitions too (run with -race).
func TestCreatePartitionsUnderMaintenance(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{CleanupPolicy: strata.CleanupCompactDelete,
		SegmentBytes: 16 << 10, MaxIndexBytes: 4 << 10, MinCleanableDirtyRatio: 0.01}))
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer c.Close()

	l := newLoops()
	var mu sync.Mutex
	acked := map[string]strata.Position{}
	var appended atomic.Int64
	l.run("append", func(i int) error {
		d, err := s.DescribeTopic("t")
		if err != nil {
			return err
		}
		part := i % len(d.Partitions)
		key := fmt.Sprint("k", i)
		offs, err := s.AppendTo(ctx, "t", part, strata.Record{Key: []byte(key), Value: make([]byte, 200)})
		if err != nil {
			return err
		}
		mu.Lock()
		acked[key] = strata.Position{Partition: part, Offset: offs}
		mu.Unlock()
		appended.Add(1)
		return nil
	})
	l.run("retention", func(int) error { _, err := s.EnforceRetention(ctx); return err })
	l.run("compact", func(int) error { _, err := s.Compact(ctx, "t"); return err })
	l.run("alter", func(i int) error {
		d, err := s.DescribeTopic("t")
		if err != nil {
			return err
		}
		cfg := d.Config
		cfg.Partitions = 0 // the count is CreatePartitions'
		cfg.Retention = time.Duration(24+i%24) * time.Hour
		return s.AlterTopicConfig("t", cfg)
	})
	for n := 2; n <= 12; n++ {
		waitProgress(t, &appended, int64(n)) // a record to each partition
		require.NoError(t, s.CreatePartitions("t", n))
	}
	waitProgress(t, &appended, 24)
	require.NoError(t, l.wait())

	mu.Lock()
	want := len(acked)
	mu.Unlock()
	require.Positive(t, want)
	seen := map[string]bool{}
	for len(seen) < want {
		msgs, err := c.Poll(ctx)
		require.NoError(t, err, "%d of %d records read", len(seen), want)
		for _, m := range msgs {
			key := string(m.Key)
			pos, ok := acked[key]
			require.True(t, ok, "record %q was never acknowledged", key)
			require.Equal(t, pos, strata.Position{Partition: m.Partition, Offset: m.Offset}, key)
			seen[key] = true
		}
	}
	require.Len(t, c.Assignment(), 12)
}

// TestCreatePartitionsDeleteClose grows a topic while another goroutine
// deletes it, or closes the store: each call either happens before the
// other or fails with the other's sentinel, nothing panics, and the store
// reopens with no trace of the deleted topic.
func TestCreatePartitionsDeleteClose(t *testing.T) {
	for _, end := range []string{"DeleteTopic", "Close"} {
		t.Run(end, func(t *testing.T) {
			for round := range 20 {
				dir := t.TempDir()
				s, err := strata.Open(dir, nil)
				require.NoError(t, err)
				require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
				done := make(chan error, 1)
				go func() {
					for n := 2; ; n++ {
						if err := s.CreatePartitions("t", n); err != nil {
							done <- err
							return
						}
					}
				}()
				time.Sleep(time.Duration(round%5) * time.Millisecond)
				if end == "DeleteTopic" {
					require.NoError(t, s.DeleteTopic("t"))
					require.ErrorIs(t, <-done, strata.ErrUnknownTopic)
				} else {
					require.NoError(t, s.Close())
					require.ErrorIs(t, <-done, strata.ErrClosed)
				}
				_ = s.Close()
				s, err = strata.Open(dir, nil)
				require.NoError(t, err)
				d, err := s.DescribeTopic("t")
				if end == "DeleteTopic" {
					require.True(t, errors.Is(err, strata.ErrUnknownTopic), "round %d: %v", round, err)
					require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 3}))
					d, err = s.DescribeTopic("t")
					require.NoError(t, err)
					require.Len(t, d.Partitions, 3)
				} else {
					require.NoError(t, err)
					require.GreaterOrEqual(t, len(d.Partitions), 1)
				}
				require.NoError(t, s.Close())
			}
		})
	}
}
