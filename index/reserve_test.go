package index

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/stratalog/strata/vfs"
	"github.com/stretchr/testify/require"
)

// sparseFS is a Mem whose files are sparse as on the OS: a page that
// Truncate grew the file over is a hole until it is written or reserved
// (AllocateRange), and once the disk is full (setFull) a hole can get no
// block: a write call into it fails with ENOSPC, a reservation too, and a
// write through the mapping faults, as SIGBUS does.
type sparseFS struct {
	*vfs.Mem
	mu     sync.Mutex
	full   bool
	backed map[string]map[int64]bool // per path, the pages that have a block
}

const page = 4096

func newSparseFS() *sparseFS {
	return &sparseFS{Mem: vfs.NewMem(), backed: map[string]map[int64]bool{}}
}

func (s *sparseFS) setFull(full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.full = full
}

func (s *sparseFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := s.Mem.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.backed[name] == nil || flag&os.O_TRUNC != 0 {
		s.backed[name] = map[int64]bool{}
		// What the file holds now has its blocks.
		size, err := f.Size()
		if err != nil {
			return nil, err
		}
		for p := int64(0); p*page < size; p++ {
			s.backed[name][p] = true
		}
	}
	return &sparseFile{File: f, fs: s}, nil
}

type sparseFile struct {
	vfs.File
	fs *sparseFS
}

// back gives the pages of [off, off+n) blocks, and reports false if one
// of them is a hole the full disk has no block for.
func (f *sparseFile) back(off, n int64) bool {
	s := f.fs
	s.mu.Lock()
	defer s.mu.Unlock()
	pages := s.backed[f.Name()]
	for p := off / page; p*page < off+n; p++ {
		if !pages[p] && s.full {
			return false
		}
	}
	for p := off / page; p*page < off+n; p++ {
		pages[p] = true
	}
	return true
}

func (f *sparseFile) WriteAt(b []byte, off int64) (int, error) {
	if !f.back(off, int64(len(b))) {
		return 0, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.WriteAt(b, off)
}

func (f *sparseFile) AllocateRange(off, n int64) error {
	if !f.back(off, n) {
		return &fs.PathError{Op: "fallocate", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.AllocateRange(off, n)
}

func (f *sparseFile) WriteMap(m []byte, off int, b []byte) error {
	if !f.back(int64(off), int64(len(b))) {
		return &fs.PathError{Op: "writemap", Path: f.Name(), Err: vfs.ErrFault}
	}
	return f.File.WriteMap(m, off, b)
}

func (f *sparseFile) Truncate(size int64) error {
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	s := f.fs
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.backed[f.Name()] {
		if p*page >= size {
			delete(s.backed[f.Name()], p)
		}
	}
	return nil
}

// TestReserveAhead appends entries and counts the reservations they make:
// a page first, then steps doubling up to 64 KiB, each reserved before an
// entry is written into it.
func TestReserveAhead(t *testing.T) {
	fsys := vfs.NewMem()
	x := openOffset(t, fsys, "0.index", 0, 0, true)
	require.Zero(t, fsys.Count(vfs.OpAllocate), "opening reserves nothing")
	// The reservation reaches 4, 8, 16, 32, 64, 128, 192 and 256 KiB.
	const entries = 256 << 10 / OffsetEntrySize
	for i := range entries {
		require.NoError(t, x.Append(int64(i+1), int32(i+1)))
	}
	require.Equal(t, 8, fsys.Count(vfs.OpAllocate))
	require.NoError(t, x.Append(entries+1, entries+1))
	require.Equal(t, 9, fsys.Count(vfs.OpAllocate), "the next entry needs the next step")
}

// TestFullDiskNeverFaults fills the disk under both indexes of a segment,
// whose files are sparse, after their first entries: appends that need
// more room fail with ENOSPC and
// change nothing, none writes into a hole (which would fault), the time
// index still takes the entry Reserve kept room for, and once space is back
// appends go on.
func TestFullDiskNeverFaults(t *testing.T) {
	fsys := newSparseFS()
	x, err := OpenOffset(fsys, "0.index", 0, 0, true)
	require.NoError(t, err)
	tx, err := OpenTime(fsys, "0.timeindex", 0, 0, true)
	require.NoError(t, err)
	require.NoError(t, tx.Reserve())
	require.NoError(t, x.Append(1, 1)) // reserves a page
	require.NoError(t, tx.MaybeAppend(1, 1, false))

	fsys.setFull(true)
	n := 1
	var offErr, timeErr error
	for offErr == nil || timeErr == nil {
		n++
		if offErr == nil {
			if offErr = x.Append(int64(n), int32(n)); offErr == nil {
				require.Equal(t, n, x.Entries())
			}
		}
		if timeErr == nil {
			if timeErr = tx.MaybeAppend(int64(n), int64(n), false); timeErr == nil {
				require.Equal(t, n, tx.Entries())
			}
		}
	}
	require.ErrorIs(t, offErr, syscall.ENOSPC)
	require.ErrorIs(t, timeErr, syscall.ENOSPC)
	require.Equal(t, page/OffsetEntrySize, x.Entries(), "the reserved page is used")
	require.Equal(t, page/TimeEntrySize-1, tx.Entries(), "the last reserved slot is kept")
	require.ErrorIs(t, x.Append(int64(n+1), int32(n+1)), syscall.ENOSPC, "and stays refused")
	require.Equal(t, page/OffsetEntrySize, x.Entries())

	last := int64(1 << 40)
	require.NoError(t, tx.MaybeAppend(last, int64(n), true), "the final entry has its room")
	ts, _ := tx.LastEntry()
	require.Equal(t, last, ts)

	fsys.setFull(false)
	require.NoError(t, x.Append(int64(n+1), int32(n+1)), "space is back")
	require.NoError(t, x.Trim())
	require.NoError(t, tx.Trim())
	require.NoError(t, x.Close())
	require.NoError(t, tx.Close())
	require.Len(t, fileBytes(t, fsys, "0.index"), (page/OffsetEntrySize+1)*OffsetEntrySize)
	require.Len(t, fileBytes(t, fsys, "0.timeindex"), page/TimeEntrySize*TimeEntrySize)
}

// TestReserveUnsupported: where the file system cannot reserve blocks,
// entries go into the sparse file as they always did, every one with a
// write call (none copied into the mapping, which would fault on a full
// disk), and no reservation is tried again.
func TestReserveUnsupported(t *testing.T) {
	fsys := vfs.NewMem()
	fsys.SetInjector(func(op vfs.Op, _ string) error {
		if op == vfs.OpAllocate {
			return errors.ErrUnsupported
		}
		return nil
	})
	x := openOffset(t, fsys, "0.index", 0, 0, true)
	tx := openTime(t, fsys, "0.timeindex", 0, 0, true)
	require.NoError(t, tx.Reserve())
	for i := 1; i <= 2*page; i++ {
		require.NoError(t, x.Append(int64(i), int32(i)))
		require.NoError(t, tx.MaybeAppend(int64(i), int64(i), false))
	}
	require.Equal(t, 2*page, x.Entries())
	require.Equal(t, 2, fsys.Count(vfs.OpAllocate), "one try per index")
	require.Equal(t, 4*page, fsys.Count(vfs.OpWrite), "every entry written with a write call")
	require.Zero(t, fsys.Count(vfs.OpWriteMap))
}

// TestReservedSizeIsWholeEntries: a writable index's file, grown by the
// reservations ahead of its entries, always holds whole entries, as
// Kafka's AbstractIndex sizes its files (roundDownToExactMultiple), so
// that a live or crashed directory's time index passes a size check such
// as Kafka's TimeIndex.sanityCheck (kafka-dump-log --index-sanity-check)
// and Verify's.
func TestReservedSizeIsWholeEntries(t *testing.T) {
	dir := t.TempDir()
	x, err := OpenTime(vfs.OS, dir+"/0.timeindex", 0, 0, true)
	require.NoError(t, err)
	o, err := OpenOffset(vfs.OS, dir+"/0.index", 0, 0, true)
	require.NoError(t, err)
	sizes := map[int64]bool{}
	for i := range 100 << 10 / TimeEntrySize {
		require.NoError(t, x.MaybeAppend(int64(i+1), int64(i+1), false))
		require.NoError(t, o.Append(int64(i+1), int32(i+1)))
		for _, f := range []struct {
			name string
			size int64
		}{{"0.timeindex", TimeEntrySize}, {"0.index", OffsetEntrySize}} {
			fi, err := os.Stat(dir + "/" + f.name)
			require.NoError(t, err)
			require.Zero(t, fi.Size()%f.size, "%s: %d bytes after %d entries", f.name, fi.Size(), i+1)
			sizes[fi.Size()] = true
		}
	}
	require.Greater(t, len(sizes), 4, "the files grew in several reservations")
	require.NoError(t, x.Close())
	require.NoError(t, o.Close())
}
