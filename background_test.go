package strata_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/bubble"
	"github.com/stratalog/strata/stratatest"
	"github.com/stratalog/strata/vfs"
)

// TestOpenStartsNoGoroutine: a reopen under each policy, with the store's
// retention and cleaner intervals, starts no goroutine, of the store's or
// of its partitions', until a job or a roll's fsync is due, and Close
// stops everything.
func TestOpenStartsNoGoroutine(t *testing.T) {
	for _, policy := range []strata.SyncPolicy{strata.SyncEvery(0), strata.SyncNever, strata.SyncAlways} {
		t.Run(policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fsys := vfs.NewMem()
				opts := &strata.Options{FS: fsys, Sync: policy}
				s, err := strata.Open("/s", opts)
				require.NoError(t, err)
				require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 3, CleanupPolicy: strata.CleanupCompact}))
				require.NoError(t, s.Close())

				before := bubble.Goroutines()
				s, err = strata.Open("/s", opts)
				require.NoError(t, err)
				require.Equal(t, before, bubble.Goroutines(), "goroutines after Open")
				_, err = s.AppendTo(ctx, "t", 0, strata.Record{Key: []byte("k"), Value: []byte("v")})
				require.NoError(t, err)
				require.Equal(t, before, bubble.Goroutines(), "goroutines after an append")
				require.NoError(t, s.Close())
			})
		})
	}
}

// TestBackgroundCleansOnItsInterval: between its jobs a store has no
// goroutine, of its own or of its partitions'; the background cleaner
// still cleans a compacted topic every CleanerInterval, on the bubble's
// clock, and after Close nothing runs.
func TestBackgroundCleansOnItsInterval(t *testing.T) {
	for _, policy := range []strata.SyncPolicy{strata.SyncEvery(0), strata.SyncNever, strata.SyncAlways} {
		t.Run(policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				before := bubble.Goroutines()
				s := stratatest.Open(t, &strata.Options{Sync: policy, CleanerInterval: time.Minute})
				require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
				_, err := s.Append(ctx, "t", rec("k", "v"))
				require.NoError(t, err)
				synctest.Wait()
				require.Equal(t, before, bubble.Goroutines(), "goroutines of an open store")

				require.NoError(t, s.CreateTopic("profiles", strata.TopicConfig{
					CleanupPolicy: strata.CleanupCompact, SegmentBytes: 4096, MinCleanableDirtyRatio: -1,
				}))
				for i := range 300 {
					_, err := s.Append(ctx, "profiles", rec(fmt.Sprint("user-", i%10), fmt.Sprint("v", i)))
					require.NoError(t, err)
				}
				d, err := s.DescribeTopic("profiles")
				require.NoError(t, err)
				written := d.Partitions[0].Bytes
				time.Sleep(time.Minute - time.Nanosecond)
				synctest.Wait()
				d, err = s.DescribeTopic("profiles")
				require.NoError(t, err)
				require.Equal(t, written, d.Partitions[0].Bytes, "not cleaned before the interval")
				time.Sleep(time.Nanosecond)
				synctest.Wait()
				d, err = s.DescribeTopic("profiles")
				require.NoError(t, err)
				require.Less(t, d.Partitions[0].Bytes, written/3, "cleaned at the interval")
				require.NoError(t, s.Close())
				time.Sleep(time.Hour)
				synctest.Wait()
			})
		})
	}
}

// TestWriteInABubbleToAStoreOpenedOutside: a store opened outside a
// testing/synctest bubble may be written inside one, and the bubble's clock
// still moves: the write starts no goroutine in the bubble (one blocked on
// the store's channels, made outside, would never be durably blocked).
func TestWriteInABubbleToAStoreOpenedOutside(t *testing.T) {
	s, err := strata.Open("/s", &strata.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 4096}))
	synctest.Test(t, func(t *testing.T) {
		for i := range 100 { // rolls too
			_, err := s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprint("v", i)))
			require.NoError(t, err)
		}
		start := time.Now()
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, time.Minute, time.Since(start))
	})
}
