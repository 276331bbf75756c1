package strata_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestOpenWhenStaleOffsetTombstonesCannotBeWritten: after a DeleteTopic
// that a crash cut before its tombstones, Open writes them
// (DeleteStaleOffsets); if that append fails (a full disk), the store
// still opens: the stale offsets are harmless (their topic is gone) and a
// later Open drops them.
func TestOpenWhenStaleOffsetTombstonesCannotBeWritten(t *testing.T) {
	opts := &strata.Options{Sync: strata.SyncAlways, Logger: slog.New(slog.DiscardHandler)}
	m := vfs.NewMem()
	s, err := strata.Open("data", onFS(m, opts))
	require.NoError(t, err)
	fillAndCommit(t, s, 1)
	m.SetInjector(failOffsetsWrites)
	require.NoError(t, s.DeleteTopic("t"))
	after := m.Crash()
	// The disk is still full where the offsets topic appends (its .log;
	// the recovery-point checkpoint is let through here, see the next test).
	after.SetInjector(func(op vfs.Op, path string) error {
		if strings.HasSuffix(path, ".log") {
			return failOffsetsWrites(op, path)
		}
		return nil
	})
	s, err = strata.Open("data", onFS(after, opts))
	if err == nil {
		s.Close()
	}
	require.NoError(t, err, "Open of a store whose only problem is a full disk")
}

// TestOpenAfterCrashWhenTheRecoveryPointCannotBeWritten: after a crash,
// Open rewrites every partition's recovery point; on a full disk that
// write fails, and the store opens anyway (the checkpoint stays due, as
// after a roll).
func TestOpenAfterCrashWhenTheRecoveryPointCannotBeWritten(t *testing.T) {
	opts := &strata.Options{Logger: slog.New(slog.DiscardHandler)}
	m := vfs.NewMem()
	s, err := strata.Open("data", onFS(m, opts))
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	_, err = s.AppendTo(ctx, "t", 0, rec("k", "v"))
	require.NoError(t, err)
	after := m.Crash()
	after.SetInjector(func(op vfs.Op, path string) error {
		if (op == vfs.OpCreate || op == vfs.OpWrite) && strings.HasSuffix(path, "recovery-point.tmp") {
			return vfs.ErrInjected // ENOSPC in real life
		}
		return nil
	})
	s, err = strata.Open("data", onFS(after, opts))
	if err == nil {
		s.Close()
	}
	require.NoError(t, err)
}

// calledFrom reports whether the stack holds a function whose name
// contains each of names.
func calledFrom(names ...string) bool {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	found := 0
	for {
		f, more := frames.Next()
		for _, n := range names {
			if strings.Contains(f.Function, n) {
				found++
			}
		}
		if !more {
			break
		}
	}
	return found >= len(names)
}

// TestDeleteTopicKeepsTheNextTopicsCommits: DeleteTopic writes the
// registry, releases the store's lock, and only then tombstones the
// groups' offsets of the deleted topic. A CreateTopic of the name and a
// commit for the new topic in between keep that commit: only offsets with
// the deleted topic's id go. The hook runs the interleaving
// deterministically inside the group walk (Options.Now is called there).
func TestDeleteTopicKeepsTheNextTopicsCommits(t *testing.T) {
	var s *strata.Store
	var armed atomic.Bool
	var hookErr error
	clock := func() time.Time {
		if armed.Load() && calledFrom("expireLocked", "DeleteTopic") && armed.CompareAndSwap(true, false) {
			// Another goroutine, between DeleteTopic's registry write and
			// its tombstones of group "b":
			if hookErr = s.CreateTopic("t", strata.TopicConfig{}); hookErr == nil {
				for i := range 10 {
					if _, hookErr = s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprint("new-", i))); hookErr != nil {
						break
					}
				}
			}
			if hookErr == nil {
				hookErr = s.Commit("b", "t", 0, 7, "")
			}
		}
		return time.Now()
	}
	var err error
	s, err = strata.Open(t.TempDir(), &strata.Options{Now: clock, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("other", strata.TopicConfig{}))
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	// Group "a" has a member, so the walk over the groups consults the clock.
	c, err := s.Consumer("a", []string{"other"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	defer c.Close()
	// Group "b" exists (it commits elsewhere), so the walk visits it after "a".
	require.NoError(t, s.Commit("b", "other", 0, 0, ""))

	armed.Store(true)
	require.NoError(t, s.DeleteTopic("t"))
	require.NoError(t, hookErr)
	require.False(t, armed.Load(), "the hook ran")
	om, ok := s.Committed("b", "t", 0)
	require.True(t, ok, "the commit made for the new topic %q survives the old topic's deletion", "t")
	require.Equal(t, int64(7), om.Offset)
}

// TestRegistryV1Upgrade: a version 1 topics.json (no ids, no checksum)
// opens: its topics get ids, the file is rewritten as version 2, the data
// is kept.
func TestRegistryV1Upgrade(t *testing.T) {
	dir := t.TempDir()
	opts := &strata.Options{Logger: logOnFailure(t)}
	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2, Retention: -1}))
	for i := range 10 {
		_, err := s.AppendTo(ctx, "t", i%2, rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
	}
	require.NoError(t, s.Commit("g", "t", 1, 3, ""))
	d, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.NoError(t, s.Close())

	// Make it look as a v1 store left it: a v1 topics.json, no partition.metadata.
	cfgJSON, err := json.Marshal(map[string]any{"version": 1, "topics": map[string]strata.TopicConfig{"t": d.Config, strata.ConsumerOffsetsTopic: {Partitions: 1, CleanupPolicy: strata.CleanupCompact, SegmentBytes: 16 << 20}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "topics.json"), cfgJSON, 0o644))
	for _, p := range []string{"t-0", "t-1", strata.ConsumerOffsetsTopic + "-0"} {
		require.NoError(t, os.Remove(filepath.Join(dir, p, "partition.metadata")))
	}
	// Commits written without ids, as the old build did, are what the
	// old __consumer_offsets holds; the ones above carry d.ID. Either way
	// the upgraded topic gets a new id; a commit carrying d.ID is then
	// "for an earlier topic" and disappears.
	s, err = strata.Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	up, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.False(t, up.ID.IsZero())
	recs, err := s.Read(ctx, "t", 1, 0, 100)
	require.NoError(t, err)
	require.Len(t, recs, 5)
	b, err := os.ReadFile(filepath.Join(dir, "topics.json"))
	require.NoError(t, err)
	require.Contains(t, string(b), `"version": 2`)
}

// TestFlippedPartitionMetadataOpens: partition.metadata has no checksum
// and is not fsynced; one changed character of its id still parses as an
// id, another one. topics.json is the record of the id: Open trusts it and
// writes the file again.
func TestFlippedPartitionMetadataOpens(t *testing.T) {
	dir := t.TempDir()
	opts := &strata.Options{Logger: logOnFailure(t)}
	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	_, err = s.AppendTo(ctx, "t", 0, rec("k", "v"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	path := filepath.Join(dir, "t-0", "partition.metadata")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	i := len(b) - 5
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))
	s, err = strata.Open(dir, opts)
	if err == nil {
		s.Close()
	}
	require.NoError(t, err, "one flipped byte in a side file")
}

// TestLostRegistryKeepsTheData: topics.json is lost (deleted by hand, a
// restore that missed it). Open says so, and the application's usual
// "create the topic if missing" is refused instead of removing the
// topic's data as stale; RebuildRegistry then brings it back.
func TestLostRegistryKeepsTheData(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{}))
	for i := range 10 {
		_, err := s.AppendTo(ctx, "orders", 0, rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	require.NoError(t, os.Remove(filepath.Join(dir, "topics.json")))

	roLogs := &warnRecorder{}
	ro, err := strata.Open(dir, &strata.Options{ReadOnly: true, Logger: slog.New(roLogs)})
	require.NoError(t, err)
	require.True(t, roLogs.mention("RebuildRegistry"), "a ReadOnly Open says why it shows no topics: %q", roLogs.all())
	require.Empty(t, ro.Topics())
	require.NoError(t, ro.Close())

	logs := &warnRecorder{}
	s, err = strata.Open(dir, &strata.Options{Logger: slog.New(logs)})
	require.NoError(t, err)
	require.True(t, logs.mention("RebuildRegistry"), "Open says how to keep the data: %q", logs.all())
	require.ErrorIs(t, s.CreateTopic("orders", strata.TopicConfig{}), strata.ErrTopicExists)
	require.NoError(t, s.Close())
	_, err = strata.RebuildRegistry(dir)
	require.NoError(t, err)
	s, err = strata.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	recs, err := s.Read(ctx, "orders", 0, 0, 100)
	require.NoError(t, err)
	require.Len(t, recs, 10)
}

// TestRecordsAfterADamagedLengthStayReachable: a damaged length field in
// the part of a segment a clean Open scans is stepped over to the next
// batch that reads: the records before it read, a read at it fails, and
// the records after it stay reachable by offset.
func TestRecordsAfterADamagedLengthStayReachable(t *testing.T) {
	dir := t.TempDir()
	opts := &strata.Options{Logger: logOnFailure(t)}
	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	for i := range 20 {
		_, err := s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	logPath := filepath.Join(dir, "t-0", "00000000000000000000.log")
	b, err := os.ReadFile(logPath)
	require.NoError(t, err)
	// Find batch 10 (one record per batch) and damage its length field.
	pos := 0
	for range 10 {
		pos += 12 + int(uint32(b[pos+8])<<24|uint32(b[pos+9])<<16|uint32(b[pos+10])<<8|uint32(b[pos+11]))
	}
	b[pos+11] ^= 0x40
	require.NoError(t, os.WriteFile(logPath, b, 0o644))
	s, err = strata.Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	recs, err := s.Read(ctx, "t", 0, 0, 100)
	require.NoError(t, err)
	require.Len(t, recs, 10, "the intact records before the damage")
	_, err = s.Read(ctx, "t", 0, 10, 1)
	require.ErrorIs(t, err, strata.ErrCorrupt)
	recs, err = s.Read(ctx, "t", 0, 15, 1)
	require.NoError(t, err, "records after the damaged batch stay reachable by offset")
	require.Len(t, recs, 1)
}

// TestDamagedLengthInSealedSegmentKeepsLaterSegments: a clean shutdown,
// then one flipped bit in the length field of the last batch of a sealed
// segment (the part Open scans): the segment is cut at the damage, and the
// later segments — intact, fsynced records — stay.
func TestDamagedLengthInSealedSegmentKeepsLaterSegments(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, &strata.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 4 << 10, Retention: -1}))
	for i := range 200 {
		_, err := s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprintf("value-%03d-%s", i, strings.Repeat("x", 40))))
		require.NoError(t, err)
	}
	d, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.GreaterOrEqual(t, d.Partitions[0].Segments, 4)
	require.NoError(t, s.Close())

	logPath := filepath.Join(dir, "t-0", "00000000000000000000.log")
	b, err := os.ReadFile(logPath)
	require.NoError(t, err)
	// The last batch of the first (sealed) segment: damage its length.
	pos, last := 0, 0
	for pos < len(b) {
		last = pos
		pos += 12 + int(uint32(b[pos+8])<<24|uint32(b[pos+9])<<16|uint32(b[pos+10])<<8|uint32(b[pos+11]))
	}
	b[last+11] ^= 0x40
	require.NoError(t, os.WriteFile(logPath, b, 0o644))

	s, err = strata.Open(dir, &strata.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer s.Close()
	end, err := s.ListOffsets("t", 0, strata.Latest)
	require.NoError(t, err)
	require.Equal(t, int64(200), end, "one flipped bit of one batch; the later segments hold 150+ intact records")
}

// TestCommitWithLostRegistrySaysWhy: with topics.json lost, the offsets
// topic's directory is an orphan too; a commit fails saying so (and how to
// keep the data), not with an unknown offsets topic.
func TestCommitWithLostRegistrySaysWhy(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	_, err = s.AppendTo(ctx, "t", 0, rec("k", "v"))
	require.NoError(t, err)
	require.NoError(t, s.Commit("g", "t", 0, 1, ""))
	require.NoError(t, s.Close())
	require.NoError(t, os.Remove(filepath.Join(dir, "topics.json")))

	s, err = strata.Open(dir, &strata.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("u", strata.TopicConfig{}))
	_, err = s.AppendTo(ctx, "u", 0, rec("k", "v"))
	require.NoError(t, err)
	err = s.Commit("g", "u", 0, 1, "")
	require.ErrorIs(t, err, strata.ErrTopicExists)
	require.NotErrorIs(t, err, strata.ErrUnknownTopic)
	require.Contains(t, err.Error(), "RebuildRegistry")
}
