package strata_test

import (
	"context"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
	"github.com/stratalog/strata/typed"
	"github.com/stratalog/strata/vfs"
)

// TestShiftByDoesNotOverflow: ShiftBy(math.MaxInt64) from a commit at 5
// planned 0 (the sum wrapped around); it clamps to the end, and the most
// negative shift to the start.
func TestShiftByDoesNotOverflow(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	for range 10 {
		_, err := s.AppendTo(ctx, "t", 0, rec("k", "v"))
		require.NoError(t, err)
	}
	require.NoError(t, s.Commit("g", "t", 0, 5, ""))
	plan, err := s.ResetOffsets("g", "t", strata.ShiftBy(math.MaxInt64), true)
	require.NoError(t, err)
	require.Equal(t, int64(10), plan[0].To)
	plan, err = s.ResetOffsets("g", "t", strata.ShiftBy(math.MinInt64), true)
	require.NoError(t, err)
	require.Equal(t, int64(0), plan[0].To)
}

// TestBadInputSentinels: each kind of bad input a user must tell apart has
// a strata sentinel, and changes nothing.
func TestBadInputSentinels(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	_, err := s.AppendTo(ctx, "t", 0, rec("k", "v"))
	require.NoError(t, err)

	require.ErrorIs(t, s.Commit("", "t", 0, 1, ""), strata.ErrInvalidGroup)
	require.ErrorIs(t, s.Commit(strings.Repeat("g", 40000), "t", 0, 1, ""), strata.ErrInvalidGroup)
	require.ErrorIs(t, s.Commit("g", "t", 0, 1, strings.Repeat("m", 5000)), strata.ErrMetadataTooLarge)
	_, ok := s.Committed("g", "t", 0)
	require.False(t, ok, "nothing was committed")

	_, err = s.ResetOffsets("", "t", strata.ToEarliest, true)
	require.ErrorIs(t, err, strata.ErrInvalidGroup, "a dry run refuses what the real run would")
	_, err = s.ResetOffsets("", "t", strata.ToEarliest, false)
	require.ErrorIs(t, err, strata.ErrInvalidGroup)

	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	other, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, PollWait: time.Millisecond})
	require.NoError(t, err)
	for range 5 {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
		_, _ = c.Poll(pctx)
		_, _ = other.Poll(pctx)
		cancel()
	}
	require.Len(t, c.Assignment(), 1, "one partition each")
	notMine := strata.TopicPartition{Topic: "t", Partition: 1 - c.Assignment()[0].Partition}
	require.ErrorIs(t, c.CommitOffsets(ctx, map[strata.TopicPartition]int64{notMine: 0}), strata.ErrNotOwner)
	require.NoError(t, c.Close())
	require.NoError(t, other.Close())

	for _, topics := range [][]string{{"../x"}, {"t", "a/b"}, {""}} {
		_, err := s.Consumer("g", topics, strata.ConsumerOptions{})
		require.ErrorIs(t, err, strata.ErrInvalidTopic, "%q", topics)
	}
	_, err = s.Consumer("g", []string{strata.ConsumerOffsetsTopic}, strata.ConsumerOptions{})
	require.ErrorIs(t, err, strata.ErrReservedTopic)

	for name, cfg := range map[string]strata.TopicConfig{
		"NaN ratio":         {MinCleanableDirtyRatio: math.NaN()},
		"-Inf ratio":        {MinCleanableDirtyRatio: math.Inf(-1), CleanupPolicy: strata.CleanupCompact},
		"ratio above 1":     {MinCleanableDirtyRatio: 2},
		"negative interval": {Sync: strata.SyncEvery(-time.Second)},
	} {
		require.ErrorIs(t, s.CreateTopic("bad", cfg), strata.ErrInvalidConfig, name)
	}
	require.NotContains(t, s.Topics(), "bad")
	require.NoError(t, s.CreateTopic("ok", strata.TopicConfig{MinCleanableDirtyRatio: -1, CleanupPolicy: strata.CleanupCompact}),
		"a negative ratio means 0: clean whenever anything is dirty")
}

// TestDiskFullIsErrDiskFull: a full disk is strata.ErrDiskFull, and the
// failed append changes nothing.
func TestDiskFullIsErrDiskFull(t *testing.T) {
	m := vfs.NewMem()
	s, err := strata.Open("data", &strata.Options{FS: m, Sync: strata.SyncNever, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 1 << 20, MaxIndexBytes: 4 << 10}))
	m.SetDiskLimit(m.DiskUsage())
	big := strata.Record{Key: []byte("k"), Value: make([]byte, 64<<10)}
	_, err = s.AppendTo(ctx, "t", 0, big)
	require.ErrorIs(t, err, strata.ErrDiskFull)
	end, err := s.ListOffsets("t", 0, strata.Latest)
	require.NoError(t, err)
	require.Zero(t, end)
	m.SetDiskLimit(-1)
	_, err = s.AppendTo(ctx, "t", 0, big)
	require.NoError(t, err)
}

// TestOpenBadDirectory: an empty directory name and a regular file are
// clear errors, not mkdir's.
func TestOpenBadDirectory(t *testing.T) {
	_, err := strata.Open("", nil)
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	_, err = strata.Open(file, nil)
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
	require.Contains(t, err.Error(), "not a directory")
}

// TestOpenRemovesRegistryLeftover: a topics.json.tmp that a failed write
// left is removed by Open.
func TestOpenRemovesRegistryLeftover(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	require.NoError(t, s.Close())
	tmp := filepath.Join(dir, "topics.json.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte(`{"version":`), 0o644))
	s, err = strata.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	_, err = os.Stat(tmp)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Equal(t, []string{"t"}, s.Topics())
}

// TestNilContext: every method that takes a context takes nil as
// context.Background(), instead of panicking.
func TestNilContext(t *testing.T) {
	var none context.Context // nil
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	_, err := s.Append(none, "t", rec("k", "v"))
	require.NoError(t, err)
	_, err = s.AppendTo(none, "t", 0, rec("k", "v"))
	require.NoError(t, err)
	recs, err := s.Read(none, "t", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	_, err = s.Fetch(none, "t", 0, 0, 10, time.Millisecond)
	require.NoError(t, err)
	for r, err := range s.Records(none, "t", 0, 0) {
		require.NoError(t, err)
		require.Equal(t, int64(0), r.Offset)
		break
	}
	_, err = s.Lag(none, "g", "t")
	require.NoError(t, err)
	_, err = s.EnforceRetention(none)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("c", strata.TopicConfig{CleanupPolicy: strata.CleanupCompact}))
	_, err = s.Compact(none, "c")
	require.NoError(t, err)
	p := s.Producer(strata.ProducerOptions{})
	require.NoError(t, p.Produce(none, "t", rec("k", "v"), nil))
	require.NoError(t, p.Flush(none))
	require.NoError(t, p.Close())
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	msgs, err := c.Poll(none)
	require.NoError(t, err)
	require.NotEmpty(t, msgs)
	require.NoError(t, c.Commit(none))
	require.NoError(t, c.CommitOffsets(none, map[strata.TopicPartition]int64{{Topic: "t"}: 1}))
	require.NoError(t, c.Close())
	tr := typed.NewReader(s, "t", 0, 0, typed.String(), typed.String())
	_, err = tr.Next(none)
	require.NoError(t, err)
	for _, err := range tr.All(none) {
		require.NoError(t, err)
		break
	}
}
