package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"syscall"
)

// memFile is a File of a Mem.
type memFile struct {
	fs     *Mem
	name   string
	node   *memNode
	read   bool // opened for reading
	write  bool // opened for writing
	append bool // opened with os.O_APPEND: WriteAt fails, as on the OS

	closed bool // guarded by fs.mu
}

var (
	errNegativeOffset = errors.New("vfs: negative offset")
	errAppendWriteAt  = errors.New("vfs: invalid use of WriteAt on file opened with O_APPEND")
)

// checkLocked fails if the Mem has crashed or the file is closed.
func (f *memFile) checkLocked(op string) error {
	switch {
	case f.fs.mu.crashed:
		return &fs.PathError{Op: op, Path: f.name, Err: ErrCrashed}
	case f.closed:
		return &fs.PathError{Op: op, Path: f.name, Err: os.ErrClosed}
	}
	return nil
}

// Name returns the name the file was opened with.
func (f *memFile) Name() string { return f.name }

// ReadAt reads from the file's current contents, as os.File.ReadAt does:
// fewer than len(p) bytes come with io.EOF.
func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := f.checkLocked("read"); err != nil {
		return 0, err
	}
	switch {
	case !f.read:
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: syscall.EBADF}
	case off < 0:
		return 0, &fs.PathError{Op: "readat", Path: f.name, Err: errNegativeOffset}
	}
	if err := m.beginLocked(OpRead, f.name); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	data := f.node.data
	if off >= int64(len(data)) {
		return 0, io.EOF
	}
	n := copy(p, data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt writes p at off, growing the file (with zeros before off, if off is
// past its end) as needed. When the injector fails it, it writes only
// p[:len(p)/2] and returns that count with the error; on a full disk (see
// [Mem.SetDiskLimit]) it writes what fits.
func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := f.checkLocked("write"); err != nil {
		return 0, err
	}
	switch {
	case !f.write:
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: syscall.EBADF}
	case f.append:
		return 0, errAppendWriteAt
	case off < 0:
		return 0, &fs.PathError{Op: "writeat", Path: f.name, Err: errNegativeOffset}
	}
	injected := m.beginLocked(OpWrite, f.name)
	if injected != nil {
		p = p[:len(p)/2]
	}
	n, err := m.writeLocked(f.node, p, off)
	switch {
	case injected != nil:
		return n, injected
	case err != nil:
		return n, &fs.PathError{Op: "write", Path: f.name, Err: err}
	}
	return n, nil
}

// freeLocked returns how many bytes nd may grow by before the disk is full.
func (m *Mem) freeLocked(nd *memNode) int64 {
	if m.mu.limit < 0 || nd.links == 0 {
		return math.MaxInt64
	}
	return max(0, m.mu.limit-m.mu.used)
}

// writeLocked writes as much of p at off as the disk limit allows and returns
// how many bytes it wrote, with ENOSPC if that is fewer than len(p).
func (m *Mem) writeLocked(nd *memNode, p []byte, off int64) (int, error) {
	size := int64(len(nd.data))
	n := int64(len(p))
	var err error
	if free := m.freeLocked(nd); off+n > size && off+n-size > free {
		n = min(max(0, size+free-off), n)
		err = syscall.ENOSPC
	}
	if n == 0 {
		return 0, err
	}
	if end := off + n; end > size {
		if gerr := m.resizeLocked(nd, end); gerr != nil {
			return 0, gerr
		}
	}
	copy(nd.data[off:], p[:n])
	return int(n), err
}

// resizeLocked sets the size of nd's current contents, zero-filling growth.
// It moves the contents to a larger array only when nd has no live mapping.
func (m *Mem) resizeLocked(nd *memNode, size int64) error {
	old := int64(len(nd.data))
	switch {
	case size <= int64(cap(nd.data)):
		if err := nd.region.commit(size); err != nil {
			return err
		}
		nd.data = nd.data[:size]
		if size > old {
			nd.region.grown(nd.data[old:], old)
		}
	case nd.maps > 0:
		return ErrMapped
	default:
		grown, r, err := newBacking(size, max(size, 2*int64(cap(nd.data))))
		if err != nil {
			return err
		}
		copy(grown, nd.data)
		nd.setBacking(grown, r)
	}
	if nd.links > 0 {
		m.mu.used += size - old
	}
	return nil
}

// Size returns the file's current size.
func (f *memFile) Size() (int64, error) {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := f.checkLocked("stat"); err != nil {
		return 0, err
	}
	if err := m.beginLocked(OpStat, f.name); err != nil {
		return 0, err
	}
	return int64(len(f.node.data)), nil
}

// Truncate sets the file's current size, growing it with zeros. Growing past
// the disk limit fails with ENOSPC and no effect.
func (f *memFile) Truncate(size int64) error {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := f.checkLocked("truncate"); err != nil {
		return err
	}
	if !f.write || size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: syscall.EINVAL}
	}
	if err := m.beginLocked(OpTruncate, f.name); err != nil {
		return err
	}
	return f.setSizeLocked("truncate", size)
}

// setSizeLocked sets the file's size for op (Truncate or Allocate), growing
// it with zeros. Growing past the disk limit fails with ENOSPC and no
// effect.
func (f *memFile) setSizeLocked(op string, size int64) error {
	m, nd := f.fs, f.node
	if grow := size - int64(len(nd.data)); grow > m.freeLocked(nd) {
		return &fs.PathError{Op: op, Path: f.name, Err: syscall.ENOSPC}
	}
	if err := m.resizeLocked(nd, size); err != nil {
		return &fs.PathError{Op: op, Path: f.name, Err: err}
	}
	return nil
}

// Allocate grows the file with zeros to size if it is smaller, as
// AllocateRange(0, size) does.
func (f *memFile) Allocate(size int64) error { return f.AllocateRange(0, size) }

// AllocateRange grows the file with zeros to off+n if it is smaller. In
// memory there are no blocks to reserve and every byte counts at once, holes
// included, so only growing can fail: past the disk limit it fails with
// ENOSPC and no effect.
func (f *memFile) AllocateRange(off, n int64) error {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := f.checkLocked("fallocate"); err != nil {
		return err
	}
	switch {
	case !f.write:
		return &fs.PathError{Op: "fallocate", Path: f.name, Err: syscall.EBADF}
	case off < 0 || n < 0:
		return &fs.PathError{Op: "fallocate", Path: f.name, Err: syscall.EINVAL}
	}
	if err := m.beginLocked(OpAllocate, f.name); err != nil {
		return err
	}
	if off+n <= int64(len(f.node.data)) {
		return nil
	}
	return f.setSizeLocked("fallocate", off+n)
}

// Sync makes the file's current contents its durable ones.
func (f *memFile) Sync() error {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := f.checkLocked("sync"); err != nil {
		return err
	}
	if err := m.beginLocked(OpSync, f.name); err != nil {
		return err
	}
	f.node.syncLocked()
	return nil
}

func (nd *memNode) syncLocked() {
	nd.synced = append(nd.synced[:0], nd.data...)
}

// Map returns the first size bytes of the file's current contents, aliased:
// see "Mappings" on [Mem]. The file must be open for reading and writing.
func (f *memFile) Map(size int) ([]byte, error) {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := f.checkLocked("mmap"); err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, &fs.PathError{Op: "mmap", Path: f.name, Err: syscall.EINVAL}
	}
	if err := m.beginLocked(OpMap, f.name); err != nil {
		return nil, err
	}
	nd := f.node
	switch {
	case size == 0:
		return nil, nil
	case !f.read || !f.write:
		return nil, &fs.PathError{Op: "mmap", Path: f.name, Err: syscall.EACCES}
	}
	switch {
	case size <= cap(nd.data) && nd.maps > 0:
	case size <= cap(nd.data):
		// Fix the array's extent: growing past it would move the contents.
		nd.data = nd.data[:len(nd.data):max(len(nd.data), size)]
	case nd.maps > 0:
		return nil, &fs.PathError{Op: "mmap", Path: f.name, Err: ErrMapped}
	default:
		// Reserve room for the file to grow into, as mmap(2) past the end
		// of a file does.
		grown, r, err := newBacking(int64(len(nd.data)), int64(size))
		if err != nil {
			return nil, &fs.PathError{Op: "mmap", Path: f.name, Err: err}
		}
		copy(grown, nd.data)
		nd.setBacking(grown, r)
	}
	nd.maps++
	return nd.data[:size:size], nil
}

// WriteMap copies p into the mapping m at off under the Mem's lock, so that
// it never races with a Sync copying the contents. An injected failure
// (OpWriteMap) writes nothing, as a fault before the first byte would. Bytes past the file's
// size fail with ErrFault, as the OS's SIGBUS would; so does writing after
// a crash, when the mapping no longer reaches a file.
func (f *memFile) WriteMap(m []byte, off int, p []byte) error {
	fsys := f.fs
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	nd := f.node
	switch {
	case off < 0 || off+len(p) > len(m) || !nd.owns(m):
		return &fs.PathError{Op: "writemap", Path: f.name, Err: syscall.EINVAL}
	case fsys.mu.crashed:
		return &fs.PathError{Op: "writemap", Path: f.name, Err: fmt.Errorf("%w: %w", ErrFault, ErrCrashed)}
	case off+len(p) > len(nd.data):
		return &fs.PathError{Op: "writemap", Path: f.name, Err: fmt.Errorf("%w: bytes %d to %d are past the end of the file at %d", ErrFault, off, off+len(p), len(nd.data))}
	}
	if err := fsys.beginLocked(OpWriteMap, f.name); err != nil {
		return err
	}
	copy(m[off:], p)
	return nil
}

// owns reports whether b is a live mapping of nd.
func (nd *memNode) owns(b []byte) bool {
	return nd.maps > 0 && len(b) <= cap(nd.data) && &b[0] == &nd.data[:cap(nd.data)][0]
}

// SyncMap makes the file's current contents, including what was written
// through the mapping b, durable, as Sync does. It works on a closed file.
func (f *memFile) SyncMap(b []byte) error {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.crashed {
		return &fs.PathError{Op: "msync", Path: f.name, Err: ErrCrashed}
	}
	if len(b) == 0 {
		return nil
	}
	if err := m.beginLocked(OpSyncMap, f.name); err != nil {
		return err
	}
	if !f.node.owns(b) {
		return &fs.PathError{Op: "msync", Path: f.name, Err: syscall.EINVAL}
	}
	f.node.syncLocked()
	return nil
}

// Unmap releases the mapping b; it works on a closed file. A nil b is a
// no-op; a slice that is not a live mapping of the file fails with EINVAL.
// Later accesses through b are undefined, as on the OS (where they crash):
// a large file's mapping may be reused for another file (see "Mappings" on
// [Mem]); otherwise the slice stays plain memory, and writes through it may
// or may not reach the file.
func (f *memFile) Unmap(b []byte) error {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.crashed {
		return &fs.PathError{Op: "munmap", Path: f.name, Err: ErrCrashed}
	}
	if len(b) == 0 {
		return nil
	}
	if !f.node.owns(b) {
		return &fs.PathError{Op: "munmap", Path: f.name, Err: syscall.EINVAL}
	}
	nd := f.node
	nd.maps--
	if nd.maps == 0 && nd.region != nil && len(nd.data) < regionMin {
		// The reserved room goes with the last mapping.
		nd.setBacking(bytes.Clone(nd.data), nil)
	}
	return nil
}

// setBacking makes data, in region r (nil for the heap), nd's contents,
// releasing the region of the contents it replaces: nd must have no live
// mapping.
func (nd *memNode) setBacking(data []byte, r *region) {
	if nd.region != r {
		nd.region.free()
	}
	nd.data, nd.region = data, r
}

// Close closes the file; its mappings stay valid until unmapped.
func (f *memFile) Close() error {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := f.checkLocked("close"); err != nil {
		return err
	}
	f.closed = true
	return nil
}
