package vfs

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// withReserveOnly runs f with new regions reserved inaccessible and
// committed as their files grow, as on Windows, and with an empty pool
// (a region from it would be committed whole).
func withReserveOnly(t *testing.T, f func(t *testing.T)) {
	mem, _, err := mapRegion(regionMin)
	if err != nil {
		t.Skip("no regions here: a Mem's files are on the Go heap")
	}
	unmapRegion(mem)
	regionPool.Lock()
	saved := regionPool.free
	regionPool.free = nil
	regionPool.Unlock()
	setReserveOnly(true)
	t.Cleanup(func() {
		setReserveOnly(false)
		regionPool.Lock()
		regionPool.free = saved
		regionPool.Unlock()
	})
	f(t)
}

// TestMemRegionsCommitWhatTheFileHolds: where memory is reserved and
// committed in two steps (Windows), a 1 GiB mapping for a log commits
// what the file's size reaches, a step at a time, not 1 GiB; touching a
// byte not committed would crash, so this runs every way a file grows
// into its mapping.
func TestMemRegionsCommitWhatTheFileHolds(t *testing.T) {
	withReserveOnly(t, func(t *testing.T) {
		m := NewMem()
		f, err := m.OpenFile("/0.log", os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		b, err := f.Map(1 << 30)
		require.NoError(t, err)
		r := f.(*memFile).node.region
		require.NotNil(t, r, "a 1 GiB mapping is in a region")
		require.Zero(t, r.committed)

		require.NoError(t, f.AllocateRange(0, 64<<10)) // as a segment reserves ahead
		require.NoError(t, f.WriteMap(b, 0, []byte("batch")))
		require.Equal(t, int64(commitStep), r.committed)
		_, err = f.WriteAt([]byte("far"), 3<<20+5) // WriteAt past the end
		require.NoError(t, err)
		require.NoError(t, f.Truncate(5<<20)) // Truncate
		require.NoError(t, f.Allocate(6<<20)) // Allocate
		require.Equal(t, int64(6<<20), r.committed)
		require.Equal(t, "batch", string(b[:5]))
		require.Equal(t, "far", string(b[3<<20+5:3<<20+8]))
		require.Equal(t, make([]byte, 1<<20), b[5<<20:6<<20])

		// Shrunk and grown again: the bytes cut read as zeros.
		require.NoError(t, f.Truncate(4))
		require.NoError(t, f.Truncate(6<<20))
		require.Equal(t, make([]byte, 3), b[3<<20+5:3<<20+8])
		require.Equal(t, int64(6<<20), r.committed)

		// A second file of the same capacity reuses the region, cleared.
		require.NoError(t, f.Unmap(b))
		require.NoError(t, m.Remove("/0.log"))
		require.NoError(t, f.Close())
		g, err := m.OpenFile("/1.log", os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		c, err := g.Map(1 << 30)
		require.NoError(t, err)
		require.NoError(t, g.Truncate(6<<20))
		require.Equal(t, make([]byte, 6<<20), c[:6<<20])
		require.NoError(t, g.Unmap(c))
		require.NoError(t, g.Close())
	})
}

// TestMemLargeFilesReserveOnly runs the tests of large files with regions
// reserved and committed in two steps.
func TestMemLargeFilesReserveOnly(t *testing.T) {
	withReserveOnly(t, func(t *testing.T) {
		t.Run("CostWhatIsWritten", TestMemLargeFilesCostWhatIsWritten)
		t.Run("ReusedClean", TestMemRegionsAreReusedClean)
	})
}
