package segment

import (
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// TestCreateNew: CreateNew removes nothing before it creates a segment,
// and one whose .log is there after all fails with os.ErrExist and leaves
// the segment's files as they were.
func TestCreateNew(t *testing.T) {
	eachFS(t, func(t *testing.T, fx fixture) {
		cfg := Config{MaxBytes: testMaxBytes}
		s, err := CreateNew(fx.fsys, fx.dir, 0, cfg)
		require.NoError(t, err)
		recs := makeRecords(0, 10, 90, 1000)
		require.NoError(t, s.Append(encode(t, recs)))
		require.NoError(t, s.Close())

		_, err = CreateNew(fx.fsys, fx.dir, 0, cfg)
		require.ErrorIs(t, err, os.ErrExist)
		s, err = Open(fx.fsys, fx.dir, 0, cfg, true)
		require.NoError(t, err, "the segment's files are still there")
		require.Equal(t, int64(10), s.NextOffset())
		require.NoError(t, s.Close())
	})
	fx, m := memFixture(t)
	s, err := CreateNew(fx.fsys, fx.dir, 0, Config{MaxBytes: testMaxBytes})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Zero(t, m.Count(vfs.OpRemove), "removals")
}

// TestOpenListed: a segment opened with its directory's listing looks up
// none of its optional files (no stat of its index files, no probe of a
// .txnindex), finds the same batches as Open, and, once open, looks at the
// file system again: an index file it creates later is not taken for one
// that is there.
func TestOpenListed(t *testing.T) {
	fx, m := memFixture(t)
	cfg := Config{MaxBytes: testMaxBytes}
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	recs := makeRecords(0, 10, 90, 1000)
	require.NoError(t, s.Append(encode(t, recs)))
	require.NoError(t, s.Close())

	names, err := fx.fsys.ReadDir(fx.dir)
	require.NoError(t, err)
	require.Equal(t, []string{FileName(0, LogSuffix)}, names, "one small batch: no index files")
	listed := func(name string) bool { return slices.Contains(names, name) }
	opens := m.Count(vfs.OpOpen)
	s, err = OpenListed(fx.fsys, fx.dir, 0, cfg, true, listed)
	require.NoError(t, err)
	require.Equal(t, opens+1, m.Count(vfs.OpOpen), "the .log only")
	require.Equal(t, int64(10), s.NextOffset())
	require.Nil(t, s.cfg.listed, "the listing is the open's only")
	require.NoError(t, s.Close())
}
