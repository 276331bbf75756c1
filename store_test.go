package strata_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/vfs"
)

var ctx = context.Background()

func rec(key, value string) strata.Record {
	return strata.Record{Key: []byte(key), Value: []byte(value)}
}

func TestOpenCloseReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 3}))
	pos, err := s.Append(ctx, "orders", rec("a", "1"), rec("b", "2"), rec("a", "3"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "closing twice is a no-op")
	_, err = s.Append(ctx, "orders", rec("a", "4"))
	require.ErrorIs(t, err, strata.ErrClosed)

	_, err = os.Stat(filepath.Join(dir, ".clean-shutdown"))
	require.NoError(t, err, "Close writes the clean-shutdown marker")

	s, err = strata.Open(dir, nil)
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, ".clean-shutdown"))
	require.True(t, errors.Is(err, os.ErrNotExist), "Open removes the marker")
	require.Equal(t, []string{"orders"}, s.Topics())
	for _, p := range pos {
		recs, err := s.Read(ctx, "orders", p.Partition, p.Offset, 1)
		require.NoError(t, err)
		require.Len(t, recs, 1)
	}
	d, err := s.DescribeTopic("orders")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 3)
	require.Equal(t, 7*24*time.Hour, d.Config.Retention, "defaults are filled in")
	require.NoError(t, s.Close())
}

func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	_, err = strata.Open(dir, nil)
	require.ErrorIs(t, err, strata.ErrLocked)
	require.NoError(t, s.Close())
	s, err = strata.Open(dir, nil)
	require.NoError(t, err, "Close releases the lock")
	require.NoError(t, s.Close())
}

func TestTopicNames(t *testing.T) {
	s := stratatest.OpenOnDisk(t, nil)
	bad := []string{"", ".", "..", "a/b", "../escape", "with space", "ünicode", "semi;colon", strings.Repeat("x", 250), "nul\x00"}
	for _, name := range bad {
		err := s.CreateTopic(name, strata.TopicConfig{})
		require.ErrorIs(t, err, strata.ErrInvalidTopic, "name %q", name)
	}
	entries, err := os.ReadDir(s.Dir())
	require.NoError(t, err)
	for _, e := range entries {
		require.True(t, strings.HasPrefix(e.Name(), "."), "a bad name touches no file, found %s", e.Name())
	}
	require.ErrorIs(t, s.CreateTopic("__consumer_offsets", strata.TopicConfig{}), strata.ErrReservedTopic)
	for _, good := range []string{"a", "A.b_c-9", strings.Repeat("x", 249), "..."} {
		require.NoError(t, s.CreateTopic(good, strata.TopicConfig{}), good)
	}
	require.ErrorIs(t, s.CreateTopic("a", strata.TopicConfig{}), strata.ErrTopicExists)
	require.ErrorIs(t, s.CreateTopic("b", strata.TopicConfig{Partitions: -1}), strata.ErrInvalidConfig)
}

func TestDeleteTopic(t *testing.T) {
	s := stratatest.OpenOnDisk(t, nil)
	require.NoError(t, s.CreateTopic("gone", strata.TopicConfig{Partitions: 2}))
	_, err := s.Append(ctx, "gone", rec("k", "v"))
	require.NoError(t, err)
	require.NoError(t, s.DeleteTopic("gone"))
	require.Empty(t, s.Topics())
	_, err = os.Stat(filepath.Join(s.Dir(), "gone-0"))
	require.True(t, errors.Is(err, os.ErrNotExist))
	require.ErrorIs(t, s.DeleteTopic("gone"), strata.ErrUnknownTopic)
	_, err = s.Append(ctx, "gone", rec("k", "v"))
	require.ErrorIs(t, err, strata.ErrUnknownTopic)
	require.NoError(t, s.CreateTopic("gone", strata.TopicConfig{}), "the name is free again")
	recs, err := s.Read(ctx, "gone", 0, 0, 10)
	require.NoError(t, err)
	require.Empty(t, recs, "a new topic starts empty")
}

func TestAppendRoutesLikeKafka(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 10}))
	keys := []string{"21", "foobar", "a", "order-17", ""}
	for _, k := range keys {
		pos, err := s.Append(ctx, "t", rec(k, "v1"), rec(k, "v2"))
		require.NoError(t, err)
		want := topic.KeyPartition([]byte(k), 10)
		require.Equal(t, want, pos[0].Partition, "key %q goes where Kafka puts it", k)
		require.Equal(t, want, pos[1].Partition)
		require.Equal(t, pos[0].Offset+1, pos[1].Offset, "per-key order")
	}
	// Kafka UtilsTest: "21" is partition 0 of 10, "foobar" 6 of 10.
	pos, err := s.Append(ctx, "t", rec("21", "x"), rec("foobar", "y"))
	require.NoError(t, err)
	require.Equal(t, 0, pos[0].Partition)
	require.Equal(t, 6, pos[1].Partition)

	// Keyless records stick to one partition per call, then move.
	nokey := strata.Record{Value: []byte("v")}
	seen := map[int]bool{}
	var prev = -1
	for range 20 {
		pos, err := s.Append(ctx, "t", nokey, nokey, nokey)
		require.NoError(t, err)
		require.Equal(t, pos[0].Partition, pos[2].Partition, "one sticky partition per call")
		require.NotEqual(t, prev, pos[0].Partition, "the next call moves on")
		prev = pos[0].Partition
		seen[pos[0].Partition] = true
	}
	require.Greater(t, len(seen), 3)
}

func TestAppendBadInputWritesNothing(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 4, MaxBatchBytes: 1024}))
	_, err := s.Append(ctx, "nope", rec("a", "b"))
	require.ErrorIs(t, err, strata.ErrUnknownTopic)
	_, err = s.Append(ctx, "t")
	require.ErrorIs(t, err, strata.ErrNoRecords)
	_, err = s.AppendTo(ctx, "t", 4, rec("a", "b"))
	require.ErrorIs(t, err, strata.ErrUnknownPartition)
	require.Contains(t, err.Error(), "[0, 4)")

	// Many keys over several partitions, one of them too large: nothing lands.
	var recs []strata.Record
	for i := range 20 {
		recs = append(recs, rec(fmt.Sprint("k", i), "small"))
	}
	recs = append(recs, strata.Record{Key: []byte("big"), Value: make([]byte, 2000)})
	_, err = s.Append(ctx, "t", recs...)
	require.ErrorIs(t, err, strata.ErrBatchTooLarge)
	for p := range 4 {
		end, err := s.ListOffsets("t", p, strata.Latest)
		require.NoError(t, err)
		require.Zero(t, end, "partition %d is untouched", p)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Append(cctx, "t", rec("a", "b"))
	require.ErrorIs(t, err, context.Canceled)
}

// TestReadFetchListOffsets runs in a synctest bubble: Fetch waits on its
// fake clock.
func TestReadFetchListOffsets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.UnixMilli(1_700_000_000_000)
		s := stratatest.Open(t, &strata.Options{Now: func() time.Time { return now }})
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
		for i := range 10 {
			r := rec("k", fmt.Sprint(i))
			r.Timestamp = now.Add(time.Duration(i) * time.Second)
			_, err := s.Append(ctx, "t", r)
			require.NoError(t, err)
		}
		recs, err := s.Read(ctx, "t", 0, 3, 4)
		require.NoError(t, err)
		require.Len(t, recs, 4)
		for i, r := range recs {
			require.Equal(t, int64(3+i), r.Offset)
			require.Equal(t, fmt.Sprint(3+i), string(r.Value))
		}
		recs, err = s.Read(ctx, "t", 0, 10, 4)
		require.NoError(t, err)
		require.Empty(t, recs)
		_, err = s.Read(ctx, "t", 0, 11, 4)
		require.ErrorIs(t, err, strata.ErrOffsetOutOfRange)
		require.Contains(t, err.Error(), "[0, 10]")
		_, err = s.Read(ctx, "t", 1, 0, 4)
		require.ErrorIs(t, err, strata.ErrUnknownPartition)

		start := time.Now()
		recs, err = s.Fetch(ctx, "t", 0, 10, 5, 20*time.Millisecond)
		require.NoError(t, err)
		require.Empty(t, recs, "nothing arrived within the wait")
		require.Equal(t, 20*time.Millisecond, time.Since(start), "Fetch waits maxWait")
		start = time.Now()
		go func() {
			time.Sleep(5 * time.Millisecond)
			_, _ = s.Append(ctx, "t", rec("k", "late"))
		}()
		recs, err = s.Fetch(ctx, "t", 0, 10, 5, 10*time.Second)
		require.NoError(t, err)
		require.Equal(t, 5*time.Millisecond, time.Since(start), "Fetch returns when the record arrives")
		require.Len(t, recs, 1)
		require.Equal(t, "late", string(recs[0].Value))

		for _, tc := range []struct {
			spec strata.OffsetSpec
			want int64
		}{
			{strata.Earliest, 0}, {strata.Latest, 11},
			{strata.AtTime(now), 0}, {strata.AtTime(now.Add(4500 * time.Millisecond)), 5},
			{strata.AtTime(now.Add(time.Hour)), -1},
		} {
			off, err := s.ListOffsets("t", 0, tc.spec)
			require.NoError(t, err)
			require.Equal(t, tc.want, off)
		}
	})
}

func TestRecordsIteratorTails(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	_, err := s.Append(ctx, "t", rec("k", "0"), rec("k", "1"))
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var got []string
	for r, err := range s.Records(cctx, "t", 0, 0) {
		if err != nil {
			require.ErrorIs(t, err, context.Canceled)
			break
		}
		got = append(got, string(r.Value))
		if len(got) == 2 {
			go func() { _, _ = s.Append(ctx, "t", rec("k", "2")) }()
		}
		if len(got) == 3 {
			cancel()
		}
	}
	require.Equal(t, []string{"0", "1", "2"}, got)
	for _, err := range s.Records(ctx, "missing", 0, 0) {
		require.ErrorIs(t, err, strata.ErrUnknownTopic)
	}
}

func TestRecoveryAfterUncleanShutdown(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2, SegmentBytes: 4096, MaxBatchBytes: 1024}))
	var positions []strata.Position
	for i := range 300 {
		pos, err := s.Append(ctx, "t", rec(fmt.Sprint(i%7), fmt.Sprint("value-", i)))
		require.NoError(t, err)
		positions = append(positions, pos...)
	}
	require.NoError(t, s.Close())
	// Without the marker, Open treats the files as a crash left them, and
	// recovers: the data is intact.
	require.NoError(t, os.Remove(filepath.Join(dir, ".clean-shutdown")))
	s, err = strata.Open(dir, nil)
	require.NoError(t, err)
	for i, p := range positions {
		recs, err := s.Read(ctx, "t", p.Partition, p.Offset, 1)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint("value-", i), string(recs[0].Value))
	}
	require.NoError(t, s.Close())
}

func TestStats(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	_, err := s.AppendTo(ctx, "t", 1, rec("a", "b"), rec("c", "d"))
	require.NoError(t, err)
	_, err = s.Read(ctx, "t", 1, 0, 10)
	require.NoError(t, err)
	st := s.Stats().Topics["t"]
	require.Len(t, st, 2)
	require.Equal(t, int64(0), st[0].AppendedRecords)
	require.Equal(t, int64(2), st[1].AppendedRecords)
	require.Equal(t, int64(1), st[1].Appends)
	require.Equal(t, int64(2), st[1].EndOffset)
	require.Equal(t, int64(1), st[1].Reads)
	require.Positive(t, st[1].Bytes)
}

// onFS returns a copy of opts whose file system is fsys.
func onFS(fsys vfs.FS, opts *strata.Options) *strata.Options {
	o := *opts
	o.FS = fsys
	return &o
}
