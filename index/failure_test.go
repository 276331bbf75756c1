package index

import (
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stratalog/strata/vfs"
	"github.com/stretchr/testify/require"
)

// TestOpenFailures fails each file-system operation of an open in turn: the
// open returns the error and leaves no mapping or open file behind. An
// index maps its file when first needed: a failed mapping fails the first
// append instead, which takes no entry, and the next one maps.
func TestOpenFailures(t *testing.T) {
	tests := []struct {
		name string
		op   vfs.Op
	}{
		{"create", vfs.OpCreate},
		{"size", vfs.OpStat},
		{"map", vfs.OpMap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			fsys.SetInjector(vfs.FailOnce(tt.op, ".index"))
			ox, err := OpenOffset(fsys, "0.index", 0, 0, true)
			if tt.op == vfs.OpMap {
				require.NoError(t, err)
				require.ErrorIs(t, ox.Append(5, 100), vfs.ErrInjected)
				require.Zero(t, ox.Entries())
				require.NoError(t, ox.Append(5, 100))
				off, pos := ox.Lookup(6)
				require.Equal(t, [2]int64{5, 100}, [2]int64{off, int64(pos)})
				require.NoError(t, ox.Close())
			} else {
				require.ErrorIs(t, err, vfs.ErrInjected)
			}
			fsys.SetInjector(vfs.FailOnce(tt.op, ".timeindex"))
			tx, err := OpenTime(fsys, "0.timeindex", 0, 0, true)
			if tt.op == vfs.OpMap {
				require.NoError(t, err)
				require.ErrorIs(t, tx.MaybeAppend(5, 1, false), vfs.ErrInjected)
				require.Zero(t, tx.Entries())
				require.NoError(t, tx.MaybeAppend(5, 1, false))
				ts, off := tx.Lookup(6)
				require.Equal(t, [2]int64{5, 1}, [2]int64{ts, off})
				require.NoError(t, tx.Close())
			} else {
				require.ErrorIs(t, err, vfs.ErrInjected)
			}

			// Nothing stayed mapped: the files can be reopened and grown.
			x, err := OpenOffset(fsys, "0.index", 0, 1<<20, true)
			require.NoError(t, err)
			require.NoError(t, x.Close())
		})
	}
}

// TestFullDisk opens an index on a disk too small for it: the open takes
// no room (the file is not extended to its maximum size), the first entry,
// whose reservation does not fit, fails with ENOSPC and is not taken, and
// an index whose reservations fit takes its entries.
func TestFullDisk(t *testing.T) {
	fsys := vfs.NewMem()
	fsys.SetDiskLimit(1000)
	x, err := OpenOffset(fsys, "0.index", 0, 0, true)
	require.NoError(t, err)
	require.ErrorIs(t, x.Append(1, 1), syscall.ENOSPC)
	require.Zero(t, x.Entries())
	require.NoError(t, x.Close())
	x, err = OpenOffset(fsys, "1.index", 0, 800, true)
	require.NoError(t, err)
	require.Equal(t, 100, x.MaxEntries())
	for i := range 100 {
		require.NoError(t, x.Append(int64(i+1), int32(i+1)))
	}
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
	require.Len(t, fileBytes(t, fsys, "0.index"), minReserve, "the file was left with its entries and the room reserved after them")
}

// failNextWrite fails the next write into a file whose name ends with
// suffix, whether it is a write call or a copy into a mapping.
func failNextWrite(suffix string) vfs.Injector {
	var failed atomic.Bool
	return func(op vfs.Op, path string) error {
		if (op == vfs.OpWrite || op == vfs.OpWriteMap) && strings.HasSuffix(path, suffix) && failed.CompareAndSwap(false, true) {
			return vfs.ErrInjected
		}
		return nil
	}
}

// TestFailedEntryWrite fails the write of an entry into each index
// (as a full disk would): the append returns the error,
// the index keeps its entries, and the next append takes the slot.
func TestFailedEntryWrite(t *testing.T) {
	fsys := vfs.NewMem()
	x, err := OpenOffset(fsys, "0.index", 0, 1<<10, true)
	require.NoError(t, err)
	require.NoError(t, x.Append(1, 100))
	fsys.SetInjector(failNextWrite(".index"))
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
	fsys.SetInjector(failNextWrite(".timeindex"))
	require.ErrorIs(t, tx.MaybeAppend(20, 2, false), vfs.ErrInjected)
	require.Equal(t, 1, tx.Entries())
	require.NoError(t, tx.MaybeAppend(30, 3, false))
	ts, off := tx.Entry(1)
	require.Equal(t, int64(30), ts)
	require.Equal(t, int64(3), off)
	require.NoError(t, tx.Close())
}

// TestEntryWritesPerPage checks how entries reach the file: the first one
// written into a page of the file, and one that runs into the next page,
// with a write call; the others, which lie wholly in the page the entry
// before them ended in, copied into the mapping. Every entry reads back
// from the file after a reopen.
func TestEntryWritesPerPage(t *testing.T) {
	const pages = 3
	tests := []struct {
		name   string
		size   int
		append func(fsys vfs.FS, n int) error
		// read reopens the index and returns its entries.
		read func(fsys vfs.FS) ([][2]int64, error)
		want func(i int) [2]int64
	}{
		{"offset", OffsetEntrySize,
			func(fsys vfs.FS, n int) error {
				x, err := OpenOffset(fsys, "0.index", 0, 0, true)
				if err != nil {
					return err
				}
				for i := range n {
					if err := x.Append(int64(i), int32(10*i)); err != nil {
						return err
					}
				}
				return x.Close()
			},
			func(fsys vfs.FS) ([][2]int64, error) {
				x, err := OpenOffset(fsys, "0.index", 0, 0, false)
				if err != nil {
					return nil, err
				}
				var got [][2]int64
				for i := range x.Entries() {
					off, pos := x.Entry(i)
					got = append(got, [2]int64{off, int64(pos)})
				}
				return got, x.Close()
			},
			func(i int) [2]int64 { return [2]int64{int64(i), int64(10 * i)} }},
		{"time", TimeEntrySize,
			func(fsys vfs.FS, n int) error {
				x, err := OpenTime(fsys, "0.timeindex", 0, 0, true)
				if err != nil {
					return err
				}
				for i := range n {
					if err := x.MaybeAppend(int64(10*i+10), int64(i), false); err != nil {
						return err
					}
				}
				return x.Close()
			},
			func(fsys vfs.FS) ([][2]int64, error) {
				x, err := OpenTime(fsys, "0.timeindex", 0, 0, false)
				if err != nil {
					return nil, err
				}
				var got [][2]int64
				for i := range x.Entries() {
					ts, off := x.Entry(i)
					got = append(got, [2]int64{ts, off})
				}
				return got, x.Close()
			},
			func(i int) [2]int64 { return [2]int64{int64(10*i + 10), int64(i)} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			n := pages * pageSize / tt.size
			require.NoError(t, tt.append(fsys, n))
			calls := 0
			for i := range n {
				first, last := i*tt.size/pageSize, ((i+1)*tt.size-1)/pageSize
				if i == 0 || first != last || first != (i*tt.size-1)/pageSize {
					calls++
				}
			}
			require.Equal(t, calls, fsys.Count(vfs.OpWrite), "write calls")
			require.Equal(t, n-calls, fsys.Count(vfs.OpWriteMap), "copies into the mapping")
			got, err := tt.read(fsys)
			require.NoError(t, err)
			require.Len(t, got, n)
			for i := range n {
				require.Equal(t, tt.want(i), got[i], "entry %d", i)
			}
		})
	}
}

// TestReopenWithoutEntriesResizesNothing: a writable index reopened over
// its trimmed file and closed without a new entry neither extends nor
// trims the file (no truncate at all), and one that takes entries grows
// its file only as far as they and their reservation reach.
func TestReopenWithoutEntriesResizesNothing(t *testing.T) {
	fsys := vfs.NewMem()
	x, err := OpenOffset(fsys, "0.index", 0, 0, true)
	require.NoError(t, err)
	for i := range 10 {
		require.NoError(t, x.Append(int64(i+1), int32(i+1)))
	}
	require.LessOrEqual(t, len(fileBytes(t, fsys, "0.index")), minReserve)
	require.NoError(t, x.Close())
	require.Len(t, fileBytes(t, fsys, "0.index"), 10*OffsetEntrySize)

	truncates := fsys.Count(vfs.OpTruncate)
	x, err = OpenOffset(fsys, "0.index", 0, 0, true)
	require.NoError(t, err)
	require.Equal(t, 10, x.Entries())
	require.NoError(t, x.Close())
	require.Equal(t, truncates, fsys.Count(vfs.OpTruncate), "truncates of a reopen and close")
	require.Len(t, fileBytes(t, fsys, "0.index"), 10*OffsetEntrySize)
}
