package vfs

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// Allocate reserves the file's blocks up to size with fallocate(2), growing
// the file; where the file system cannot, it grows the file with ftruncate
// (sparse) instead.
func (f osFile) Allocate(size int64) error {
	cur, err := f.Size()
	if err != nil || size <= cur {
		return err
	}
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := conn.Control(func(fd uintptr) {
		ferr = unix.Fallocate(int(fd), 0, 0, size)
	}); err != nil {
		return err
	}
	if errors.Is(ferr, unix.EOPNOTSUPP) {
		return f.Truncate(size)
	}
	if ferr != nil {
		return &fs.PathError{Op: "fallocate", Path: f.Name(), Err: ferr}
	}
	return nil
}
