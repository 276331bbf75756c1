package strata_test

import (
	"io/fs"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestProducerIDsNeverRepeat hands out ids across more than one block,
// then after a Close and after a crash (of the in-memory file system,
// which keeps only what was synced), under each flush policy: no id is
// ever handed out twice, and the store has no producer id file until its
// first id.
func TestProducerIDsNeverRepeat(t *testing.T) {
	for _, tc := range []struct {
		name string
		sync strata.SyncPolicy
	}{
		{"sync=never", strata.SyncNever},
		{"sync=always", strata.SyncAlways},
		{"sync=every", strata.SyncEvery(time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := &strata.Options{Sync: tc.sync, RetentionCheckInterval: -1, CleanerInterval: -1}
			m := vfs.NewMem()
			s, err := strata.Open("data", onFS(m, opts))
			require.NoError(t, err)
			_, err = m.Stat(path.Join("data", strata.ProducerIDsFile))
			require.ErrorIs(t, err, fs.ErrNotExist, "no file before the first id")

			seen := map[int64]bool{}
			take := func(s *strata.Store, n int) {
				t.Helper()
				for range n {
					id, err := strata.NewProducerID(s)
					require.NoError(t, err)
					require.GreaterOrEqual(t, id, int64(0))
					require.False(t, seen[id], "id %d handed out twice", id)
					seen[id] = true
				}
			}
			take(s, strata.ProducerIDBlock+strata.ProducerIDBlock/2)
			require.NoError(t, s.Close())

			s, err = strata.Open("data", onFS(m, opts))
			require.NoError(t, err)
			take(s, 10)
			// A power cut without Close: the new Mem holds what was synced.
			crashed := m.Crash()
			_ = s.Close()
			s, err = strata.Open("data", onFS(crashed, opts))
			require.NoError(t, err)
			take(s, strata.ProducerIDBlock)
			require.NoError(t, s.Close())
		})
	}
}

// TestProducerIDsCrashAtEveryOperation fails the k-th write, sync, rename
// or creation of a run that hands out ids over three blocks, for every k,
// then crashes: the ids handed out after recovery are above every id
// handed out before the crash, and a failed allocation is retried.
func TestProducerIDsCrashAtEveryOperation(t *testing.T) {
	ops := []vfs.Op{vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpSyncDir, vfs.OpRename, vfs.OpTruncate}
	opts := &strata.Options{Sync: strata.SyncAlways, RetentionCheckInterval: -1, CleanerInterval: -1}
	calls := 2*strata.ProducerIDBlock + 1
	workload := func(s *strata.Store) (taken []int64, failed int) {
		for range calls {
			id, err := strata.NewProducerID(s)
			if err != nil {
				failed++
				continue
			}
			taken = append(taken, id)
		}
		return taken, failed
	}
	count := func(m *vfs.Mem) (n int) {
		for _, op := range ops {
			n += m.Count(op)
		}
		return n
	}

	m := vfs.NewMem()
	s, err := strata.Open("data", onFS(m, opts))
	require.NoError(t, err)
	before := count(m)
	taken, failed := workload(s)
	require.Len(t, taken, calls)
	require.Zero(t, failed)
	total := count(m) - before
	require.Positive(t, total)
	require.NoError(t, s.Close())

	for k := 0; k <= total; k++ {
		m := vfs.NewMem()
		s, err := strata.Open("data", onFS(m, opts))
		require.NoError(t, err)
		m.SetInjector(vfs.FailAfter(k, ops...))
		taken, _ := workload(s)
		after := m.Crash()
		_ = s.Close()
		s2, err := strata.Open("data", onFS(after, opts))
		require.NoError(t, err, "k=%d", k)
		id, err := strata.NewProducerID(s2)
		require.NoError(t, err, "k=%d", k)
		for _, old := range taken {
			require.Greater(t, id, old, "k=%d: id %d handed out again", k, old)
		}
		require.NoError(t, s2.Close())
	}
}

// TestProducerIDsDamagedFile: a producer id file that does not hold what
// it should fails the allocation with ErrCorrupt and is left as it is.
func TestProducerIDsDamagedFile(t *testing.T) {
	for _, tc := range []struct{ name, contents string }{
		{"not json", "{\"version\":1,"},
		{"checksum", `{"version":1,"next_producer_id":2000,"crc32c":1}`},
		{"version", `{"version":9,"next_producer_id":2000,"crc32c":0}`},
		{"empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := vfs.NewMem()
			opts := onFS(m, &strata.Options{RetentionCheckInterval: -1, CleanerInterval: -1})
			file := path.Join("data", strata.ProducerIDsFile)
			require.NoError(t, m.MkdirAll("data", 0o755))
			require.NoError(t, vfs.WriteFileAtomic(m, file, []byte(tc.contents)))
			s, err := strata.Open("data", opts)
			require.NoError(t, err, "the store opens; only producer ids are refused")
			_, err = strata.NewProducerID(s)
			require.ErrorIs(t, err, strata.ErrCorrupt)
			require.ErrorContains(t, err, strata.ProducerIDsFile)
			got, err := vfs.ReadFile(m, file)
			require.NoError(t, err)
			require.Equal(t, tc.contents, string(got))
			require.NoError(t, s.Close())
		})
	}
}

// TestProducerIDsReadBack: a valid file's next_producer_id is where the
// ids resume.
func TestProducerIDsReadBack(t *testing.T) {
	m := vfs.NewMem()
	opts := onFS(m, &strata.Options{RetentionCheckInterval: -1, CleanerInterval: -1})
	s, err := strata.Open("data", opts)
	require.NoError(t, err)
	id, err := strata.NewProducerID(s)
	require.NoError(t, err)
	require.Equal(t, int64(0), id)
	require.NoError(t, s.Close())
	s, err = strata.Open("data", opts)
	require.NoError(t, err)
	id, err = strata.NewProducerID(s)
	require.NoError(t, err)
	require.Equal(t, int64(strata.ProducerIDBlock), id, "a restart resumes at the end of the reserved block")
	require.NoError(t, s.Close())
}

func TestProducerIDAfterClose(t *testing.T) {
	s, err := strata.Open("data", onFS(vfs.NewMem(), &strata.Options{}))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = strata.NewProducerID(s)
	require.ErrorIs(t, err, strata.ErrClosed)
}

// TestProducerIDsConcurrent: goroutines allocating at once get distinct
// ids (run it with -race).
func TestProducerIDsConcurrent(t *testing.T) {
	s, err := strata.Open("data", onFS(vfs.NewMem(), &strata.Options{RetentionCheckInterval: -1, CleanerInterval: -1}))
	require.NoError(t, err)
	defer s.Close()
	const goroutines, each = 8, 300
	ids := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range each {
				id, err := strata.NewProducerID(s)
				if err != nil {
					t.Error(err)
					return
				}
				ids[g] = append(ids[g], id)
			}
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, l := range ids {
		for _, id := range l {
			require.False(t, seen[id], "id %d handed out twice", id)
			seen[id] = true
		}
	}
	require.Len(t, seen, goroutines*each)
}
