package segment

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// TestCloseTruncatesOnlyAFileOfAnotherSize: a writable segment reopened
// from a clean close and closed again makes no truncate (of its log or
// its indexes), while bytes someone else appended to its log after Open
// are cut by Close, and the segment reopens with its batches.
func TestCloseTruncatesOnlyAFileOfAnotherSize(t *testing.T) {
	fx, m := memFixture(t)
	cfg := Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 128}
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	var written []writtenBatch
	for i := range 20 {
		recs := makeRecords(int64(i), 1, 100, 1_700_000_000_000+int64(i))
		b := encode(t, recs)
		require.NoError(t, s.Append(b))
		written = append(written, writtenBatch{b, recs})
	}
	require.NoError(t, s.Close())
	size := s.Size()

	s, err = Open(fx.fsys, fx.dir, 0, cfg, true)
	require.NoError(t, err)
	requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
	before := m.Count(vfs.OpTruncate)
	require.NoError(t, s.Close())
	require.Equal(t, before, m.Count(vfs.OpTruncate), "truncates at Close of a segment of the size it had")

	// Torn bytes appended by another writer while the segment is open.
	s, err = Open(fx.fsys, fx.dir, 0, cfg, true)
	require.NoError(t, err)
	f, err := fx.fsys.OpenFile(filepath.Join(fx.dir, FileName(0, LogSuffix)), os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 9}, size)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, s.Close())
	st, err := fx.fsys.Stat(filepath.Join(fx.dir, FileName(0, LogSuffix)))
	require.NoError(t, err)
	require.Equal(t, size, st.Size)

	s, err = Open(fx.fsys, fx.dir, 0, cfg, false)
	require.NoError(t, err)
	requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
	require.NoError(t, s.Close())
}
