package index

import (
	"syscall"
	"testing"

	"github.com/stratalog/strata/vfs"
	"github.com/stretchr/testify/require"
)

// TestOpenFailures fails each file-system operation of an open in turn: the
// open returns the error and leaves no mapping or open file behind.
func TestOpenFailures(t *testing.T) {
	tests := []struct {
		name string
		op   vfs.Op
	}{
		{"create", vfs.OpCreate},
		{"size", vfs.OpStat},
		{"preallocate", vfs.OpTruncate},
		{"map", vfs.OpMap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			fsys.SetInjector(vfs.FailOnce(tt.op, ".index"))
			_, err := OpenOffset(fsys, "0.index", 0, 0, true)
			require.ErrorIs(t, err, vfs.ErrInjected)
			fsys.SetInjector(vfs.FailOnce(tt.op, ".timeindex"))
			_, err = OpenTime(fsys, "0.timeindex", 0, 0, true)
			require.ErrorIs(t, err, vfs.ErrInjected)

			// Nothing stayed mapped: the files can be reopened and grown.
			x, err := OpenOffset(fsys, "0.index", 0, 1<<20, true)
			require.NoError(t, err)
			require.NoError(t, x.Close())
		})
	}
}

// TestFullDisk preallocates on a disk too small for the index.
func TestFullDisk(t *testing.T) {
	fsys := vfs.NewMem()
	fsys.SetDiskLimit(1000)
	_, err := OpenOffset(fsys, "0.index", 0, 0, true)
	require.ErrorIs(t, err, syscall.ENOSPC)
	x, err := OpenOffset(fsys, "0.index", 0, 800, true)
	require.NoError(t, err)
	require.Equal(t, 100, x.MaxEntries())
	require.NoError(t, x.Close())
}

// TestTrimFailure fails the truncation of Trim: the index stays writable and
// a later Trim or Close does the work.
func TestTrimFailure(t *testing.T) {
	fsys := vfs.NewMem()
	x, err := OpenOffset(fsys, "0.index", 0, 0, true)
	require.NoError(t, err)
	require.NoError(t, x.Append(1, 1))
	fsys.SetInjector(vfs.FailOnce(vfs.OpTruncate, ".index"))
	require.ErrorIs(t, x.Trim(), vfs.ErrInjected)
	require.False(t, x.Full())
	require.NoError(t, x.Append(2, 2), "still writable")

	fsys.SetInjector(vfs.FailOnce(vfs.OpSync, ".index"))
	require.ErrorIs(t, x.Sync(), vfs.ErrInjected)
	require.NoError(t, x.Sync())

	fsys.SetInjector(vfs.FailOnce(vfs.OpTruncate, ".index"))
	require.ErrorIs(t, x.Close(), vfs.ErrInjected, "close reports the failed trim")
	require.NoError(t, x.Close(), "and is done")
	require.Len(t, fileBytes(t, fsys, "0.index"), DefaultMaxBytes, "the file was left preallocated")
}

// TestFailedEntryWrite fails the write of an entry into each index
// (as a full disk would): the append returns the error,
// the index keeps its entries, and the next append takes the slot.
func TestFailedEntryWrite(t *testing.T) {
	fsys := vfs.NewMem()
	x, err := OpenOffset(fsys, "0.index", 0, 1<<10, true)
	require.NoError(t, err)
	require.NoError(t, x.Append(1, 100))
	fsys.SetInjector(vfs.FailOnce(vfs.OpWrite, ".index"))
	require.ErrorIs(t, x.Append(2, 200), vfs.ErrInjected)
	require.Equal(t, 1, x.Entries())
	require.NoError(t, x.Append(3, 300))
	off, pos := x.Entry(1)
	require.Equal(t, int64(3), off)
	require.Equal(t, int32(300), pos)
	require.NoError(t, x.Close())

	tx, err := OpenTime(fsys, "0.timeindex", 0, 1<<10, true)
	require.NoError(t, err)
	require.NoError(t, tx.MaybeAppend(10, 1, false))
	fsys.SetInjector(vfs.FailOnce(vfs.OpWrite, ".timeindex"))
	require.ErrorIs(t, tx.MaybeAppend(20, 2, false), vfs.ErrInjected)
	require.Equal(t, 1, tx.Entries())
	require.NoError(t, tx.MaybeAppend(30, 3, false))
	ts, off := tx.Entry(1)
	require.Equal(t, int64(30), ts)
	require.Equal(t, int64(3), off)
	require.NoError(t, tx.Close())
}
