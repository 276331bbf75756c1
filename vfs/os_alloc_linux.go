package vfs

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// Allocate reserves the file's blocks up to size with fallocate(2), growing
// the file. Where the file system cannot reserve blocks it fails with an
// error matching errors.ErrUnsupported and changes nothing: a sparse file
// would not be the promise Allocate makes.
func (f osFile) Allocate(size int64) error {
	cur, err := f.Size()
	if err != nil || size <= cur {
		return err
	}
	return f.fallocate(cur, size-cur)
}

// AllocateRange reserves the blocks of the n bytes at off with fallocate(2)
// (mode 0: holes get blocks, and the file grows if they reach past its end).
func (f osFile) AllocateRange(off, n int64) error {
	switch {
	case off < 0 || n < 0:
		return &fs.PathError{Op: "fallocate", Path: f.Name(), Err: syscall.EINVAL}
	case n == 0:
		return nil
	}
	return f.fallocate(off, n)
}

func (f osFile) fallocate(off, n int64) error {
	var ferr error
	if err := f.control(func(fd uintptr) {
		ferr = unix.Fallocate(int(fd), 0, off, n)
	}); err != nil {
		return err
	}
	if ferr != nil {
		return &fs.PathError{Op: "fallocate", Path: f.Name(), Err: ferr}
	}
	return nil
}

// noSpace reports whether the file's file system has no free blocks left
// (statfs), the likely cause of a fault while writing into a mapping of it.
func (f osFile) noSpace() bool {
	var st unix.Statfs_t
	var serr error
	if err := f.control(func(fd uintptr) { serr = unix.Fstatfs(int(fd), &st) }); err != nil || serr != nil {
		return false
	}
	return st.Bavail == 0
}
