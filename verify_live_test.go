package strata_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// TestVerifyLive runs Verify over and over on a directory a Store is
// writing to, with segments rolling, retention deleting the oldest and new
// topics appearing: it never reports damage, and on Linux it sees the
// directory as live.
func TestVerifyLive(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, CleanerInterval: -1, RetentionCheckInterval: -1})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 2, SegmentBytes: 8192, IndexIntervalBytes: 512, RetentionBytes: 32 << 10}))

	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	wg.Add(2)
	go func() { // appends, in batches of one to a few records
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			recs := make([]strata.Record, 1+i%4)
			for j := range recs {
				recs[j] = strata.Record{Key: []byte(fmt.Sprint("k", i%13)), Value: []byte(fmt.Sprintf("value-%d-%d", i, j))}
			}
			if _, err := s.AppendTo(context.Background(), "events", i%2, recs...); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() { // retention, and new topics
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			if _, err := s.EnforceRetention(context.Background()); err != nil {
				errs <- err
				return
			}
			if i%50 == 0 && i < 500 {
				if err := s.CreateTopic(fmt.Sprint("more-", i), strata.TopicConfig{}); err != nil {
					errs <- err
					return
				}
			}
			runtime.Gosched()
		}
	}()

	deadline := time.Now().Add(2 * time.Second)
	runs := 0
	for ; runs < 30 || time.Now().Before(deadline) && runs < 200; runs++ {
		rep, err := strata.Verify(dir, nil)
		require.NoError(t, err)
		require.False(t, rep.Damaged(), "run %d: %+v", runs, rep.Findings)
		if runtime.GOOS == "linux" {
			require.True(t, rep.Live)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	rep, err := strata.Verify(dir, nil)
	require.NoError(t, err)
	require.Empty(t, rep.Findings, "closed")
	t.Logf("%d checks while live", runs)
}
