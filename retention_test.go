package strata_test

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// manualClock is a clock a test moves; safe for the store's goroutines.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *manualClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestEnforceRetention(t *testing.T) {
	clock := &manualClock{t: time.UnixMilli(1_700_000_000_000)}
	s := stratatest.Open(t, &strata.Options{Now: clock.Now, RetentionCheckInterval: -1})
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{
		Partitions: 2, Retention: time.Hour, SegmentBytes: 2048, MaxBatchBytes: 1024,
	}))
	require.NoError(t, s.CreateTopic("forever", strata.TopicConfig{Retention: -1, SegmentBytes: 2048, MaxBatchBytes: 1024}))
	for i := range 200 {
		clock.Add(time.Minute)
		_, err := s.AppendTo(ctx, "events", i%2, rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
		_, err = s.Append(ctx, "forever", rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
	}
	n, err := s.EnforceRetention(ctx)
	require.NoError(t, err)
	require.Positive(t, n)
	for p := range 2 {
		start, err := s.ListOffsets("events", p, strata.Earliest)
		require.NoError(t, err)
		require.Positive(t, start, "partition %d lost its old segments", p)
		_, err = s.Read(ctx, "events", p, start-1, 1)
		require.ErrorIs(t, err, strata.ErrOffsetOutOfRange)
		recs, err := s.Read(ctx, "events", p, start, 1000)
		require.NoError(t, err)
		require.NotEmpty(t, recs)
		oldest := recs[0].Timestamp
		require.True(t, oldest.After(clock.Now().Add(-2*time.Hour)), "what stays is recent")
	}
	start, err := s.ListOffsets("forever", 0, strata.Earliest)
	require.NoError(t, err)
	require.Zero(t, start, "Retention -1 keeps everything")

	require.NoError(t, s.DeleteRecords("forever", 0, 150))
	start, err = s.ListOffsets("forever", 0, strata.Earliest)
	require.NoError(t, err)
	require.Equal(t, int64(150), start)
	require.ErrorIs(t, s.DeleteRecords("forever", 0, 201), strata.ErrOffsetOutOfRange)
	d, err := s.DescribeTopic("forever")
	require.NoError(t, err)
	segsBefore := d.Partitions[0].Segments
	_, err = s.EnforceRetention(ctx)
	require.NoError(t, err)
	d, err = s.DescribeTopic("forever")
	require.NoError(t, err)
	require.Less(t, d.Partitions[0].Segments, segsBefore, "segments wholly below the start offset go")
	require.Equal(t, int64(150), d.Partitions[0].StartOffset)
}

// TestBackgroundRetention runs in a synctest bubble: the retention checks'
// interval passes on its clock.
func TestBackgroundRetention(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &manualClock{t: time.UnixMilli(1_700_000_000_000)}
		s := stratatest.Open(t, &strata.Options{Now: clock.Now, RetentionCheckInterval: time.Millisecond})
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Retention: time.Second, SegmentBytes: 1024, MaxBatchBytes: 512}))
		for i := range 100 {
			_, err := s.Append(ctx, "t", rec("k", fmt.Sprint(i)))
			require.NoError(t, err)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		start, err := s.ListOffsets("t", 0, strata.Earliest)
		require.NoError(t, err)
		require.Zero(t, start, "nothing has expired yet")
		clock.Add(time.Hour)
		time.Sleep(time.Millisecond)
		synctest.Wait()
		start, err = s.ListOffsets("t", 0, strata.Earliest)
		require.NoError(t, err)
		require.Greater(t, start, int64(50), "the background pass deletes expired segments")
	})
}

// TestRetentionAfterReopen deletes, after a reopen, sealed segments too
// small to have index files (segment's lazyLimit): retention renames only
// the files a segment has, and EnforceTopicRetention applies one topic's.
func TestRetentionAfterReopen(t *testing.T) {
	clock := &manualClock{t: time.UnixMilli(1_700_000_000_000)}
	dir := t.TempDir()
	opts := &strata.Options{Now: clock.Now, RetentionCheckInterval: -1, CleanerInterval: -1}
	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	for _, name := range []string{"a", "b"} {
		require.NoError(t, s.CreateTopic(name, strata.TopicConfig{Retention: time.Hour, SegmentBytes: 1024}))
		for i := range 30 {
			_, err := s.AppendTo(ctx, name, 0, rec("k", fmt.Sprint(i)))
			require.NoError(t, err)
		}
	}
	require.NoError(t, s.Close())
	clock.Add(2 * time.Hour)

	s, err = strata.Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	n, err := s.EnforceTopicRetention(ctx, "a")
	require.NoError(t, err)
	require.Positive(t, n)
	for name, want := range map[string]int64{"a": 30, "b": 0} {
		start, err := s.ListOffsets(name, 0, strata.Earliest)
		require.NoError(t, err)
		require.Equal(t, want, start, name)
	}
	_, err = s.EnforceTopicRetention(ctx, "nope")
	require.ErrorIs(t, err, strata.ErrUnknownTopic)
	n, err = s.EnforceRetention(ctx)
	require.NoError(t, err)
	require.Positive(t, n)
	start, err := s.ListOffsets("b", 0, strata.Earliest)
	require.NoError(t, err)
	require.Equal(t, int64(30), start)
}
