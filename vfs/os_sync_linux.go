package vfs

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// syncData is fdatasync(2), retried on EINTR as os.File.Sync retries
// fsync.
func (f osFile) syncData() error {
	var serr error
	if err := f.control(func(fd uintptr) {
		for {
			serr = unix.Fdatasync(int(fd))
			if serr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &fs.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
