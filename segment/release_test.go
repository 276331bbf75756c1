package segment

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// TestReleaseBehind: small appends copied into the mapping of an OS file
// release the pages behind them chunk by chunk (keeping the last chunk or
// two mapped), and every record reads back, before and after a reopen.
func TestReleaseBehind(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{MaxBytes: 64 << 20}
	s, err := Create(vfs.OS, dir, 0, cfg)
	require.NoError(t, err)
	var written []writtenBatch
	next := int64(0)
	for s.Size() < 3*releaseChunk+releaseChunk/2 {
		recs := makeRecords(next, 4, 900, 1_700_000_000_000)
		b := encode(t, recs)
		require.NoError(t, s.Append(b))
		written = append(written, writtenBatch{b, recs})
		next += 4
	}
	require.Equal(t, int64(2*releaseChunk), s.released, "released up to the chunk before the one reached")
	requireRecords(t, written, 0, readAll(t, s, 0, 1<<30))
	require.NoError(t, s.Close())
	s, err = Open(vfs.OS, dir, 0, cfg, false)
	require.NoError(t, err)
	requireRecords(t, written, 0, readAll(t, s, 0, 1<<30))
	require.NoError(t, s.Close())
}
