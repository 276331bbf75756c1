package vfs

import (
	"io/fs"

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
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := conn.Control(func(fd uintptr) {
		ferr = unix.Fallocate(int(fd), 0, cur, size-cur)
	}); err != nil {
		return err
	}
	if ferr != nil {
		return &fs.PathError{Op: "fallocate", Path: f.Name(), Err: ferr}
	}
	return nil
}
