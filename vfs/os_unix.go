//go:build unix

package vfs

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// dirFlag makes opening a non-directory fail with ENOTDIR.
const dirFlag = syscall.O_DIRECTORY

// Map maps the first size bytes of the file with mmap(2), read-write and
// shared. Mapping zero bytes returns nil. The mapping may reach past the end
// of the file, reserving room for it to grow: bytes the file gains later
// appear in it, and touching a page wholly past the end is SIGBUS.
func (f osFile) Map(size int) ([]byte, error) {
	return f.mmap(size, unix.PROT_READ|unix.PROT_WRITE)
}

// SyncMap writes the mapping's dirty pages to the file and waits (msync with
// MS_SYNC). A nil mapping is a no-op.
func (f osFile) SyncMap(m []byte) error {
	if len(m) == 0 {
		return nil
	}
	if err := unix.Msync(m, unix.MS_SYNC); err != nil {
		return &fs.PathError{Op: "msync", Path: f.Name(), Err: err}
	}
	return nil
}

// Unmap releases the mapping (munmap). A nil mapping is a no-op; a slice that
// Map did not return fails with EINVAL.
func (f osFile) Unmap(m []byte) error {
	if len(m) == 0 {
		return nil
	}
	if err := unix.Munmap(m); err != nil {
		return &fs.PathError{Op: "munmap", Path: f.Name(), Err: err}
	}
	return nil
}

// MapReadOnly maps the first size bytes of the file with mmap(2),
// read-only and shared, as [MapReadOnly] describes.
func (f osFile) MapReadOnly(size int) ([]byte, error) {
	return f.mmap(size, unix.PROT_READ)
}

// mmap maps the first size bytes of the file, shared, with the protection
// prot. Mapping zero bytes returns nil; on a closed file it fails with
// os.ErrClosed, as every other call does.
func (f osFile) mmap(size, prot int) ([]byte, error) {
	if size < 0 {
		return nil, &fs.PathError{Op: "mmap", Path: f.Name(), Err: syscall.EINVAL}
	}
	var m []byte
	var merr error
	if err := f.control(func(fd uintptr) {
		if size > 0 {
			m, merr = unix.Mmap(int(fd), 0, size, prot, unix.MAP_SHARED)
		}
	}); err != nil {
		// Control fails only on a closed file.
		return nil, &fs.PathError{Op: "mmap", Path: f.Name(), Err: os.ErrClosed}
	}
	if merr != nil {
		return nil, &fs.PathError{Op: "mmap", Path: f.Name(), Err: merr}
	}
	return m, nil
}
