package segment

import (
	"os"
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
