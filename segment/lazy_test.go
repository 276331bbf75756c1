package segment

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// requireFiles fails unless dir holds exactly the files of the segment at
// base of the given kinds.
func requireFiles(t *testing.T, fx fixture, base int64, kinds ...string) {
	t.Helper()
	var want []string
	for _, k := range kinds {
		want = append(want, FileName(base, k))
	}
	got, err := fx.fsys.ReadDir(fx.dir)
	require.NoError(t, err)
	require.ElementsMatch(t, want, got)
}

// TestSmallSegmentHasNoIndexFiles: a segment whose log stays within one
// index interval creates no index files, through appends, Seal, Sync and
// Close, and reopens (writable or not, or recovered) with its records,
// next offset and max timestamp.
func TestSmallSegmentHasNoIndexFiles(t *testing.T) {
	eachFS(t, func(t *testing.T, fx fixture) {
		cfg := Config{MaxBytes: testMaxBytes}
		s, err := Create(fx.fsys, fx.dir, 5, cfg)
		require.NoError(t, err)
		var written []writtenBatch
		for i := range 4 {
			recs := makeRecords(5+int64(i), 1, 100, 1_700_000_000_000+int64(i))
			b := encode(t, recs)
			require.NoError(t, s.Append(b))
			written = append(written, writtenBatch{b, recs})
		}
		require.LessOrEqual(t, s.Size(), int64(DefaultIndexIntervalBytes))
		require.NoError(t, s.Sync())
		require.NoError(t, s.Seal())
		require.NoError(t, s.Close())
		requireFiles(t, fx, 5, LogSuffix)

		for _, writable := range []bool{false, true} {
			s, err = Open(fx.fsys, fx.dir, 5, cfg, writable)
			require.NoError(t, err, "writable=%v", writable)
			require.Equal(t, int64(9), s.NextOffset())
			require.Equal(t, int64(1_700_000_000_003), s.MaxTimestamp())
			requireRecords(t, written, 5, readAll(t, s, 5, 1<<20))
			off, _, found, err := s.FindOffsetByTimestamp(1_700_000_000_002, 5, 1<<62, nil)
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, int64(7), off)
			require.NoError(t, s.Close())
			requireFiles(t, fx, 5, LogSuffix)
		}

		s, rec, err := OpenRecover(fx.fsys, fx.dir, 5, cfg)
		require.NoError(t, err)
		require.Empty(t, rec.Recreated, "no index file is due")
		require.Equal(t, int64(9), s.NextOffset())
		require.Equal(t, int64(1_700_000_000_003), s.MaxTimestamp())
		require.NoError(t, s.Close())
		requireFiles(t, fx, 5, LogSuffix)
	})
}

// TestIndexFilesAppearPastTheInterval: the append that takes a segment's log
// past IndexIntervalBytes creates both index files, also in a small segment
// reopened writable; from then on the segment has the indexes, entries and
// files of one that had them from the start.
func TestIndexFilesAppearPastTheInterval(t *testing.T) {
	eachFS(t, func(t *testing.T, fx fixture) {
		cfg := Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 1000}
		s, err := Create(fx.fsys, fx.dir, 0, cfg)
		require.NoError(t, err)
		r := rand.New(rand.NewPCG(4, 5))
		var written []writtenBatch
		for s.Size() <= 600 {
			written = append(written, appendRandom(t, s, r, 1, 2, 100)...)
		}
		require.NoError(t, s.Close())
		requireFiles(t, fx, 0, LogSuffix)

		s, err = Open(fx.fsys, fx.dir, 0, cfg, true)
		require.NoError(t, err)
		for s.Size() <= 1000 {
			written = append(written, appendRandom(t, s, r, 1, 2, 100)...)
		}
		requireFiles(t, fx, 0, IndexSuffix, LogSuffix, TimeIndexSuffix)
		written = append(written, appendRandom(t, s, r, 40, 2, 100)...)
		o1, t1 := indexEntries(s)
		require.NotEmpty(t, o1)
		maxTS := s.MaxTimestamp()
		require.NoError(t, s.Close())

		// The same batches in a segment in another directory.
		freshDir := filepath.Join(fx.dir, "fresh")
		require.NoError(t, fx.fsys.MkdirAll(freshDir, 0o755))
		fresh, err := Create(fx.fsys, freshDir, 0, cfg)
		require.NoError(t, err)
		for _, b := range written {
			require.NoError(t, fresh.Append(b.bytes))
		}
		o2, t2 := indexEntries(fresh)
		require.Equal(t, o2, o1)
		require.Equal(t, t2, t1)
		require.NoError(t, fresh.Close())

		s, err = Open(fx.fsys, fx.dir, 0, cfg, false)
		require.NoError(t, err)
		require.Equal(t, maxTS, s.MaxTimestamp())
		requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
		require.NoError(t, s.Close())
	})
}

// TestFailedIndexCreationFailsTheAppend: when the index files cannot be
// created (or their directory synced) for the append that takes the log past
// the interval, the append fails and changes nothing, and the next one
// works.
func TestFailedIndexCreationFailsTheAppend(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inject vfs.Injector
		want   []error
	}{
		{"creation", vfs.FailOnce(vfs.OpCreate, TimeIndexSuffix), []error{vfs.ErrInjected}},
		{"mapping", vfs.FailOnce(vfs.OpMap, TimeIndexSuffix), []error{vfs.ErrInjected}},
		{"directory fsync", vfs.FailOnce(vfs.OpSyncDir, ""), []error{ErrSync, vfs.ErrInjected}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx, m := memFixture(t)
			cfg := Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 700}
			s, err := Create(fx.fsys, fx.dir, 0, cfg)
			require.NoError(t, err)
			var written []writtenBatch
			for i := range 3 {
				recs := makeRecords(int64(i), 1, 100, 1_700_000_000_000)
				b := encode(t, recs)
				require.NoError(t, s.Append(b))
				written = append(written, writtenBatch{b, recs})
			}
			requireFiles(t, fx, 0, LogSuffix)
			size, next := s.Size(), s.NextOffset()
			recs := makeRecords(next, 2, 200, 1_700_000_000_000)
			b := encode(t, recs)
			m.SetInjector(tc.inject)
			err = s.Append(b)
			m.SetInjector(nil)
			for _, want := range tc.want {
				require.ErrorIs(t, err, want)
			}
			require.Equal(t, size, s.Size())
			require.Equal(t, next, s.NextOffset())
			require.NoError(t, s.Append(b), "the next append works")
			written = append(written, writtenBatch{b, recs})
			require.NoError(t, s.Close())
			requireFiles(t, fx, 0, IndexSuffix, LogSuffix, TimeIndexSuffix)
			s, err = Open(fx.fsys, fx.dir, 0, cfg, false)
			require.NoError(t, err)
			requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
			require.NoError(t, s.Close())
		})
	}
}
