package strata_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/typed"
)

// damageRecordBatch flips the last byte of the batch holding offset in the
// first segment of a partition directory (a byte the CRC covers), as a bad
// sector would, and returns the batch's position in the file.
func damageRecordBatch(t *testing.T, partDir string, offset int64) int {
	t.Helper()
	path := filepath.Join(partDir, "00000000000000000000.log")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for pos := 0; pos < len(data); {
		h, err := log.ReadHeader(data[pos:])
		require.NoError(t, err)
		if h.BaseOffset <= offset && offset <= h.LastOffset() {
			data[pos+h.Size()-1] ^= 0x01
			require.NoError(t, os.WriteFile(path, data, 0o644))
			return pos
		}
		pos += h.Size()
	}
	t.Fatalf("no batch holds offset %d", offset)
	return -1
}

// openDamaged opens a store on a new directory whose topic "t" holds n
// records, "value-00" on, each in its own batch, with the batch of offset
// bad damaged (damageRecordBatch). Its Close is the test's cleanup.
func openDamaged(t *testing.T, n int, bad int64) *strata.Store {
	t.Helper()
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	for i := range n {
		_, err := s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprintf("value-%02d", i)))
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	damageRecordBatch(t, filepath.Join(dir, "t-0"), bad)
	s, err = strata.Open(dir, nil)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// TestReadsReturnIntactRecordsBeforeDamage: one damaged batch (record 150
// of 200, each in its own batch) must not hide the intact records before
// it from any read path; the error comes when a reader reaches it.
func TestReadsReturnIntactRecordsBeforeDamage(t *testing.T) {
	const n, bad = 200, 150
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	for i := range n {
		_, err := s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprintf("value-%03d-%s", i, "padding-padding-padding")))
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	damageRecordBatch(t, filepath.Join(dir, "t-0"), bad)
	s, err = strata.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()

	wantRange := func(t *testing.T, got []int64, from, to int64) {
		t.Helper()
		var want []int64
		for o := from; o < to; o++ {
			want = append(want, o)
		}
		require.Equal(t, want, got)
	}
	offsetsOf := func(recs []strata.Record) []int64 {
		var out []int64
		for _, r := range recs {
			out = append(out, r.Offset)
		}
		return out
	}

	t.Run("Read", func(t *testing.T) {
		recs, err := s.Read(ctx, "t", 0, 100, 1)
		require.NoError(t, err)
		wantRange(t, offsetsOf(recs), 100, 101)
		recs, err = s.Read(ctx, "t", 0, 0, 500)
		require.NoError(t, err)
		wantRange(t, offsetsOf(recs), 0, bad)
		_, err = s.Read(ctx, "t", 0, bad, 1)
		require.ErrorIs(t, err, strata.ErrCorrupt)
		recs, err = s.Read(ctx, "t", 0, bad+1, 500)
		require.NoError(t, err, "records after the damaged batch are reachable by offset")
		wantRange(t, offsetsOf(recs), bad+1, n)
	})
	t.Run("Fetch", func(t *testing.T) {
		recs, err := s.Fetch(ctx, "t", 0, 120, 500, time.Millisecond)
		require.NoError(t, err)
		wantRange(t, offsetsOf(recs), 120, bad)
		_, err = s.Fetch(ctx, "t", 0, bad, 500, time.Millisecond)
		require.ErrorIs(t, err, strata.ErrCorrupt)
	})
	t.Run("Records", func(t *testing.T) {
		var got []int64
		var last error
		for r, err := range s.Records(ctx, "t", 0, 100) {
			if err != nil {
				last = err
				break
			}
			got = append(got, r.Offset)
		}
		wantRange(t, got, 100, bad)
		require.ErrorIs(t, last, strata.ErrCorrupt)
	})
	t.Run("Poll", func(t *testing.T) {
		c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, MaxPollRecords: 64})
		require.NoError(t, err)
		defer c.Close()
		var got []int64
		var last error
		for range 20 {
			msgs, err := c.Poll(ctx)
			if err != nil {
				last = err
				break
			}
			for _, m := range msgs {
				got = append(got, m.Offset)
			}
		}
		wantRange(t, got, 0, bad)
		require.ErrorIs(t, last, strata.ErrCorrupt)
		require.NoError(t, c.Commit(ctx), "what was read can be committed")
		om, ok := s.Committed("g", "t", 0)
		require.True(t, ok)
		require.Equal(t, int64(bad), om.Offset)
	})
	t.Run("TypedReader", func(t *testing.T) {
		r := typed.NewReader(s, "t", 0, 0, typed.String(), typed.String())
		var got []int64
		var last error
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for {
			tr, err := r.Next(rctx)
			if err != nil {
				last = err
				break
			}
			got = append(got, tr.Offset)
		}
		wantRange(t, got, 0, bad)
		require.ErrorIs(t, last, strata.ErrCorrupt)
	})
	t.Run("Lag", func(t *testing.T) {
		require.NoError(t, s.Commit("lagging", "t", 0, 120, ""))
		lag, err := s.Lag(ctx, "lagging", "t")
		require.NoError(t, err)
		require.Len(t, lag, 1)
		require.Equal(t, int64(n-120), lag[0].Lag)
		recs, err := s.Read(ctx, "t", 0, 120, 1)
		require.NoError(t, err)
		require.Equal(t, recs[0].Timestamp, lag[0].OldestUnconsumed, "the oldest unconsumed record is read in place")
	})
}

// TestConsumerCommitsWhatItReadUnderAppends: appenders race a consumer that
// commits the offset after each record it read; every such commit is in
// range, and the latest offset is never below what was read.
func TestConsumerCommitsWhatItReadUnderAppends(t *testing.T) {
	for _, policy := range []strata.SyncPolicy{strata.SyncNever, strata.SyncAlways} {
		t.Run(policy.String(), func(t *testing.T) {
			s, err := strata.Open(t.TempDir(), &strata.Options{Sync: policy})
			require.NoError(t, err)
			defer s.Close()
			require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2, SegmentBytes: 64 << 10}))
			actx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			for w := range 3 {
				go func() {
					defer func() { done <- struct{}{} }()
					for i := 0; actx.Err() == nil; i++ {
						if _, err := s.AppendTo(ctx, "t", (w+i)%2, rec("k", fmt.Sprint(w, "-", i))); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, MaxPollRecords: 50})
			require.NoError(t, err)
			defer c.Close()
			deadline := time.Now().Add(time.Second)
			polled := 0
			for time.Now().Before(deadline) {
				msgs, err := c.Poll(ctx)
				require.NoError(t, err)
				last := map[int]int64{}
				for _, m := range msgs {
					last[m.Partition] = m.Offset
				}
				offsets := map[strata.TopicPartition]int64{}
				for p, o := range last {
					latest, err := s.ListOffsets("t", p, strata.Latest)
					require.NoError(t, err)
					require.Greater(t, latest, o, "Latest is past every record read")
					offsets[strata.TopicPartition{Topic: "t", Partition: p}] = o + 1
				}
				require.NoError(t, c.CommitOffsets(ctx, offsets), "commit of what was read")
				polled += len(msgs)
			}
			stop()
			for range 3 {
				<-done
			}
			require.Positive(t, polled)
		})
	}
}
