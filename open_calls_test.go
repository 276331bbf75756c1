package strata_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestOpenLooksOnlyForWhatIsThere: Open, CreateTopic and a clean reopen
// read and remove only the files their directories' listings show: a
// cold cycle removes nothing (no leftover temporary file, stale segment
// file or swap checkpoint to look for), and a clean reopen removes only
// the clean-shutdown marker and opens only files that exist.
func TestOpenLooksOnlyForWhatIsThere(t *testing.T) {
	m := vfs.NewMem()
	coldCycle(t, m, strata.SyncNever)
	require.Zero(t, m.Count(vfs.OpRemove), "removals in a cold cycle")

	removes, opens := m.Count(vfs.OpRemove), m.Count(vfs.OpOpen)
	s, err := strata.Open("/store", &strata.Options{FS: m, Sync: strata.SyncNever})
	require.NoError(t, err)
	require.Equal(t, removes+1, m.Count(vfs.OpRemove), "a clean Open removes the marker only")
	// topics.json, partition.metadata and the segment's .log (it holds
	// one batch, so it has no index files, nor a .txnindex).
	require.Equal(t, opens+3, m.Count(vfs.OpOpen), "files a clean Open opens without creating them")
	recs, err := s.Read(ctx, "t", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.NoError(t, s.Close())
}

// TestReopenStatsEachFileOnce: a clean reopen makes no directory but the
// store's own (its MkdirAll: a partition's directory is made only when its
// listing finds none) and asks each file it reads or maps for its size
// once: topics.json, partition.metadata and the segment's .log.
func TestReopenStatsEachFileOnce(t *testing.T) {
	m := vfs.NewMem()
	coldCycle(t, m, strata.SyncNever)
	mkdirs, stats := m.Count(vfs.OpMkdir), m.Count(vfs.OpStat)
	s, err := strata.Open("/store", &strata.Options{FS: m, Sync: strata.SyncNever})
	require.NoError(t, err)
	require.Equal(t, mkdirs+1, m.Count(vfs.OpMkdir), "directories made by a clean reopen")
	require.Equal(t, stats+3, m.Count(vfs.OpStat), "sizes asked by a clean reopen")
	require.NoError(t, s.Close())
}

// TestColdCycleListsEachDirectoryOnce: a cycle from a new directory lists
// the store's directory once (Open) and the new partition's once (its
// Open, which finds none and makes it): CreateTopic does not list the
// store's directory again for stray partition directories when Open's
// listing showed none. It asks one file for its size: the .log, which
// Close seals (the segment it made, with O_EXCL, is empty).
func TestColdCycleListsEachDirectoryOnce(t *testing.T) {
	m := vfs.NewMem()
	coldCycle(t, m, strata.SyncNever)
	require.Equal(t, 2, m.Count(vfs.OpReadDir), "listings in a cold cycle")
	require.Equal(t, 1, m.Count(vfs.OpStat), "sizes asked in a cold cycle")
}
