package segment

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// TestMissingIndexFile: Open reports a missing index file as ErrCorrupt
// (and fs.ErrNotExist), rather than taking it for an empty index or failing
// with a bare ENOENT, and OpenRecover rebuilds it: the indexes come back as
// they were, and so do the records and the max timestamp.
func TestMissingIndexFile(t *testing.T) {
	for _, kind := range []string{IndexSuffix, TimeIndexSuffix} {
		for _, writable := range []bool{false, true} {
			t.Run(kind+map[bool]string{false: "/read-only", true: "/writable"}[writable], func(t *testing.T) {
				eachFS(t, func(t *testing.T, fx fixture) {
					s, err := Create(fx.fsys, fx.dir, 0, smallIndexes)
					require.NoError(t, err)
					written := appendRandom(t, s, rand.New(rand.NewPCG(1, 2)), 40, 3, 100)
					wantMax := s.MaxTimestamp()
					require.NoError(t, s.Close())
					wantOffsets, wantTimes := reopenEntries(t, fx, smallIndexes)
					require.NotEmpty(t, wantOffsets)

					path := filepath.Join(fx.dir, FileName(0, kind))
					require.NoError(t, fx.fsys.Remove(path))
					_, err = Open(fx.fsys, fx.dir, 0, smallIndexes, writable)
					require.ErrorIs(t, err, ErrCorrupt)
					require.ErrorIs(t, err, os.ErrNotExist)
					require.ErrorContains(t, err, path)

					s, rec, err := OpenRecover(fx.fsys, fx.dir, 0, smallIndexes)
					require.NoError(t, err)
					require.Equal(t, []string{path}, rec.Recreated)
					require.Zero(t, rec.Truncated)
					require.Equal(t, wantMax, s.MaxTimestamp())
					requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
					require.NoError(t, s.Close())

					gotOffsets, gotTimes := reopenEntries(t, fx, smallIndexes)
					require.Equal(t, wantOffsets, gotOffsets)
					require.Equal(t, wantTimes, gotTimes)
				})
			})
		}
	}
}

// TestOpenRecoverReplacesOversizedIndex: an index file larger than an index
// can be (2 GiB) fails even a writable open; OpenRecover, which uses nothing
// of it, removes it and builds a new one.
func TestOpenRecoverReplacesOversizedIndex(t *testing.T) {
	fx := fixture{fsys: vfs.OS, dir: t.TempDir()}
	s, err := Create(fx.fsys, fx.dir, 0, smallIndexes)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(3, 4)), 40, 3, 100)
	require.NoError(t, s.Close())
	wantOffsets, wantTimes := reopenEntries(t, fx, smallIndexes)

	path := filepath.Join(fx.dir, FileName(0, TimeIndexSuffix))
	require.NoError(t, os.Truncate(path, 1<<31+12)) // sparse: costs no disk
	_, err = Open(fx.fsys, fx.dir, 0, smallIndexes, true)
	require.ErrorIs(t, err, ErrCorrupt)
	s, rec, err := OpenRecover(fx.fsys, fx.dir, 0, smallIndexes)
	require.NoError(t, err)
	require.Equal(t, []string{path}, rec.Recreated)
	requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
	require.NoError(t, s.Close())
	gotOffsets, gotTimes := reopenEntries(t, fx, smallIndexes)
	require.Equal(t, wantOffsets, gotOffsets)
	require.Equal(t, wantTimes, gotTimes)
}
