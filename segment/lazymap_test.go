package segment

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// TestReopenMapsNoTimeIndex: a segment reopened from a clean close, writable
// or not, maps its .log only, and a read of its last record maps nothing
// more; its offset index is mapped by the first lookup its ends do not
// answer, its time index by its first search by time, which finds the
// record, and appends after a reopen still take entries in both.
func TestReopenMapsNoTimeIndex(t *testing.T) {
	fx, m := memFixture(t)
	cfg := Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 128}
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	var written []writtenBatch
	appendOne := func(i int) {
		recs := makeRecords(int64(i), 1, 100, 1_700_000_000_000+int64(i))
		b := encode(t, recs)
		require.NoError(t, s.Append(b))
		written = append(written, writtenBatch{b, recs})
	}
	for i := range 20 {
		appendOne(i)
	}
	require.NoError(t, s.Close())

	for _, writable := range []bool{false, true} {
		maps := m.Count(vfs.OpMap)
		s, err = Open(fx.fsys, fx.dir, 0, cfg, writable)
		require.NoError(t, err)
		require.Equal(t, int64(1_700_000_000_019), s.MaxTimestamp())
		require.Equal(t, maps+1, m.Count(vfs.OpMap), "writable=%v: maps at Open the .log only", writable)
		requireRecords(t, written[19:], 19, readAll(t, s, 19, 1<<20))
		require.Equal(t, maps+1, m.Count(vfs.OpMap), "writable=%v: mapped for the last record", writable)
		requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
		off, _, found, err := s.FindOffsetByTimestamp(1_700_000_000_007, 0, 1<<62, nil)
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, int64(7), off)
		require.NoError(t, s.Close())
	}

	s, err = Open(fx.fsys, fx.dir, 0, cfg, true)
	require.NoError(t, err)
	for i := 20; i < 40; i++ {
		appendOne(i)
	}
	require.NoError(t, s.Close())
	s, err = Open(fx.fsys, fx.dir, 0, cfg, false)
	require.NoError(t, err)
	_, times := indexEntries(s)
	require.Greater(t, len(times), 1)
	require.Equal(t, int64(1_700_000_000_039), times[len(times)-1][0])
	offsets, _ := indexEntries(s)
	require.Equal(t, int64(39), offsets[len(offsets)-1][0])
	requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
	require.NoError(t, s.Close())
}
