package partition

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// TestSyncNeverNeverSyncs: under SyncNever a partition that rolls, is
// synced by hand and closed makes no fsync and no msync, counts none in
// its stats, and leaves every record in the file system for the next
// Open.
func TestSyncNeverNeverSyncs(t *testing.T) {
	cfg := small(newClock())
	cfg.Sync = SyncNever
	p, m := memPartition(t, cfg)
	appendIDs(t, p, seq(0, 100)...)
	require.GreaterOrEqual(t, len(p.Segments()), 3, "the appends rolled")
	require.NoError(t, p.Sync())
	require.Zero(t, p.Stats().Fsyncs)
	require.NoError(t, p.Close())
	require.Zero(t, m.Count(vfs.OpSync)+m.Count(vfs.OpSyncDir)+m.Count(vfs.OpSyncMap))

	p2, err := Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	requireIDs(t, readRange(t, p2, 0), 0, seq(0, 100))
	require.NoError(t, p2.Close())
}
