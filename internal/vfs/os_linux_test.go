package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestAllocateRangeReservesBlocks checks on the OS that AllocateRange gives
// a sparse file's holes blocks.
func TestAllocateRangeReservesBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.index")
	f, err := OS.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	require.NoError(t, f.Truncate(1<<20))
	blocks := func() int64 {
		var st unix.Stat_t
		require.NoError(t, unix.Stat(path, &st))
		return st.Blocks * 512
	}
	require.Less(t, blocks(), int64(1<<16), "sparse")
	err = f.AllocateRange(0, 1<<16)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("the file system cannot reserve blocks: %v", err)
	}
	require.NoError(t, err)
	require.GreaterOrEqual(t, blocks(), int64(1<<16))
}
