package strata_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestCommitsSurviveCrashAtEveryOperation commits offsets under SyncAlways
// on the in-memory file system and crashes it at every write or sync of
// the workload: every commit that returned is there after reopening, and
// nothing committed later than the last one that returned.
func TestCommitsSurviveCrashAtEveryOperation(t *testing.T) {
	ops := []vfs.Op{vfs.OpWrite, vfs.OpWriteMap, vfs.OpAllocate, vfs.OpSync, vfs.OpSyncDir, vfs.OpRename, vfs.OpCreate, vfs.OpTruncate}
	opts := &strata.Options{Sync: strata.SyncAlways, RetentionCheckInterval: -1, CleanerInterval: -1}
	setup := func() *vfs.Mem {
		m := vfs.NewMem()
		s, err := strata.Open("data", onFS(m, opts))
		require.NoError(t, err)
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2, SegmentBytes: 64 << 10}))
		for i := range 40 {
			_, err := s.AppendTo(ctx, "t", i%2, rec("k", fmt.Sprint(i)))
			require.NoError(t, err)
		}
		require.NoError(t, s.Close())
		return m
	}
	workload := func(s *strata.Store) (acked int64) {
		for i := int64(1); i <= 20; i++ {
			if s.Commit("g", "t", int(i%2), i, fmt.Sprint("m", i)) != nil {
				return acked
			}
			acked = i
		}
		return acked
	}

	base := setup()
	m := base.Crash() // a copy of the durable state to count on
	s, err := strata.Open("data", onFS(m, opts))
	require.NoError(t, err)
	before := 0
	for _, op := range ops {
		before += m.Count(op)
	}
	require.Equal(t, int64(20), workload(s))
	total := -before
	for _, op := range ops {
		total += m.Count(op)
	}
	require.Positive(t, total)
	require.NoError(t, s.Close())

	for k := 0; k <= total; k++ {
		m := setup().Crash()
		s, err := strata.Open("data", onFS(m, opts))
		require.NoError(t, err)
		m.SetInjector(vfs.FailAfter(k, ops...))
		acked := workload(s)
		after := m.Crash()
		_ = s.Close() // the dead store's files answer ErrCrashed; stop its goroutines
		s2, err := strata.Open("data", onFS(after, opts))
		require.NoError(t, err, "k=%d", k)
		for p := range 2 {
			om, ok := s2.Committed("g", "t", p)
			// The last acknowledged commit for partition p, if any.
			want := int64(-1)
			for i := acked; i >= 1; i-- {
				if int(i%2) == p {
					want = i
					break
				}
			}
			if want < 0 {
				continue
			}
			require.True(t, ok, "k=%d: partition %d lost its commit", k, p)
			require.GreaterOrEqual(t, om.Offset, want, "k=%d: partition %d", k, p)
			require.LessOrEqual(t, om.Offset, acked+1, "k=%d: no commit from the future", k)
			require.Equal(t, fmt.Sprint("m", om.Offset), om.Metadata)
		}
		require.NoError(t, s2.Close())
	}
}

func TestDeleteGroupOffsets(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	_, err = s.Append(ctx, "t", rec("k", "v"))
	require.NoError(t, err)
	require.NoError(t, s.Commit("g", "t", 0, 1, ""))
	require.NoError(t, s.Commit("keep", "t", 0, 1, ""))
	require.NoError(t, s.DeleteGroupOffsets("g"))
	_, ok := s.Committed("g", "t", 0)
	require.False(t, ok)
	require.NoError(t, s.Close())
	s, err = strata.Open(dir, nil)
	require.NoError(t, err)
	_, ok = s.Committed("g", "t", 0)
	require.False(t, ok, "the tombstone is replayed")
	_, ok = s.Committed("keep", "t", 0)
	require.True(t, ok, "other groups keep theirs")
	require.NoError(t, s.Close())
}
