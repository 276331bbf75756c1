package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs of size bytes on a temporary directory for the
// test, and unmounts it when the test ends. It skips the test unless it
// runs as root where mounting works.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size)); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { require.NoError(t, unix.Unmount(dir, unix.MNT_DETACH)) })
	return dir
}

// fillDisk writes a file in dir until the disk is full, and returns its
// path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	page := make([]byte, 4096)
	for {
		if _, err := f.Write(page); err != nil {
			require.ErrorIs(t, err, syscall.ENOSPC)
			return path
		}
	}
}

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

// TestWriteMapOnFullDisk writes through the mapping of a sparse file on a
// full tmpfs: into a reserved page it works; into a hole it faults, and the
// error says the disk is full (ENOSPC) instead of naming a nil pointer;
// once space is back, the page can be reserved and written.
func TestWriteMapOnFullDisk(t *testing.T) {
	dir := mountTmpfs(t, 1<<20)
	f, err := OS.OpenFile(filepath.Join(dir, "f.index"), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(256<<10))
	m, err := f.Map(256 << 10)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, f.Unmap(m))
		require.NoError(t, f.Close())
	})
	require.NoError(t, f.AllocateRange(0, 4096))
	filler := fillDisk(t, dir)

	require.NoError(t, f.WriteMap(m, 8, []byte("reserved")))
	err = f.WriteMap(m, 64<<10, []byte("in a hole"))
	require.ErrorIs(t, err, ErrFault)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NotContains(t, err.Error(), "nil pointer")
	require.ErrorIs(t, f.AllocateRange(64<<10, 4096), syscall.ENOSPC)

	require.NoError(t, os.Remove(filler))
	require.NoError(t, f.AllocateRange(64<<10, 4096))
	require.NoError(t, f.WriteMap(m, 64<<10, []byte("in a hole")))
	buf := make([]byte, 9)
	_, err = f.ReadAt(buf, 64<<10)
	require.NoError(t, err)
	require.Equal(t, "in a hole", string(buf))
}

// TestWriteMapPastEndNotFull faults on a page past the end of the file on a disk
// with room: ErrFault, not ENOSPC.
func TestWriteMapPastEndNotFull(t *testing.T) {
	f, err := OS.OpenFile(filepath.Join(t.TempDir(), "f.log"), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	m, err := f.Map(1 << 16)
	require.NoError(t, err)
	defer func() {
		require.NoError(t, f.Unmap(m))
		require.NoError(t, f.Close())
	}()
	err = f.WriteMap(m, 1<<15, []byte("past the end"))
	require.ErrorIs(t, err, ErrFault)
	require.NotErrorIs(t, err, syscall.ENOSPC)
	require.NotContains(t, err.Error(), "nil pointer")
}
