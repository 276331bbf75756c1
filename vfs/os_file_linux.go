package vfs

import (
	"io"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// osFile is a File of the OS on Linux: a descriptor of open(2), used with
// pread, pwrite, fstat and mmap directly. An *os.File would cost each open
// an fcntl (os.NewFile asks whether the descriptor is non-blocking), a
// finalizer and three allocations, for a poller that regular files never
// use. There is no finalizer here: a file that is never closed keeps its
// descriptor.
type osFile struct{ *fdFile }

// fdFile is an open descriptor and the name it was opened with. mu keeps
// Close from running during another call (a descriptor number closed
// under a call could name another file by the time the call uses it):
// every call holds it shared, Close exclusively.
type fdFile struct {
	name   string
	mu     sync.RWMutex
	fd     int
	closed bool
	// append says the file was opened with O_APPEND, where WriteAt fails
	// as an *os.File's does: pwrite(2) would write at the end.
	append bool
}

// newOSFile wraps the descriptor fd of the file opened as name with flag.
func newOSFile(fd int, name string, flag int) osFile {
	return osFile{&fdFile{name: name, fd: fd, append: flag&os.O_APPEND != 0}}
}

// openFile opens name as a File; see openOS.
func openFile(name string, flag int, perm os.FileMode) (osFile, error) {
	fd, err := openFD(name, flag, modeBits(perm))
	if err != nil {
		return osFile{}, err
	}
	return newOSFile(fd, name, flag), nil
}

// Name returns the path the file was opened with.
func (f *fdFile) Name() string { return f.name }

// use runs fn with the descriptor, unless the file is closed: then it
// returns a *fs.PathError of op wrapping os.ErrClosed, as an *os.File
// does. An error fn returns comes back wrapped in a *fs.PathError of op.
func (f *fdFile) use(op string, fn func(fd int) error) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return &fs.PathError{Op: op, Path: f.name, Err: os.ErrClosed}
	}
	if err := fn(f.fd); err != nil {
		return &fs.PathError{Op: op, Path: f.name, Err: err}
	}
	return nil
}

// control runs fn with the descriptor, as os.File's SyscallConn().Control
// does; on a closed file it fails with os.ErrClosed.
func (f *fdFile) control(fn func(fd uintptr)) error {
	return f.use("control", func(fd int) error {
		fn(uintptr(fd))
		return nil
	})
}

// ReadAt reads len(p) bytes at off (pread, again after EINTR or a short
// read), returning io.EOF with fewer at the end of the file, as
// os.File.ReadAt does.
func (f *fdFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.name, Err: unix.EINVAL}
	}
	n := 0
	eof := false
	err := f.use("read", func(fd int) error {
		for n < len(p) {
			m, err := unix.Pread(fd, p[n:], off+int64(n))
			switch {
			case err == unix.EINTR:
				continue
			case err != nil:
				return err
			case m == 0:
				eof = true
				return nil
			}
			n += m
		}
		return nil
	})
	if err == nil && eof {
		err = io.EOF
	}
	return n, err
}

// WriteAt writes p at off (pwrite, again after EINTR or a short write).
// On a file opened with O_APPEND it fails, as os.File.WriteAt does.
func (f *fdFile) WriteAt(p []byte, off int64) (int, error) {
	if f.append {
		return 0, errAppendWriteAt
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "writeat", Path: f.name, Err: unix.EINVAL}
	}
	n := 0
	err := f.use("write", func(fd int) error {
		for n < len(p) {
			m, err := unix.Pwrite(fd, p[n:], off+int64(n))
			switch {
			case err == unix.EINTR:
				continue
			case err != nil:
				return err
			case m == 0:
				return io.ErrUnexpectedEOF
			}
			n += m
		}
		return nil
	})
	return n, err
}

// fstat returns the file's status (fstat(2)).
func (f *fdFile) fstat() (unix.Stat_t, error) {
	var st unix.Stat_t
	err := f.use("stat", func(fd int) error {
		return retryEINTR(func() error { return unix.Fstat(fd, &st) })
	})
	return st, err
}

// Size returns the file's size (fstat).
func (f *fdFile) Size() (int64, error) {
	st, err := f.fstat()
	return st.Size, err
}

// Truncate changes the file's size (ftruncate).
func (f *fdFile) Truncate(size int64) error {
	return f.use("truncate", func(fd int) error {
		return retryEINTR(func() error { return unix.Ftruncate(fd, size) })
	})
}

// Sync makes the file's contents and metadata durable (fsync).
func (f *fdFile) Sync() error {
	return f.use("sync", func(fd int) error {
		return retryEINTR(func() error { return unix.Fsync(fd) })
	})
}

// Close closes the descriptor, once no other call uses it. Closing again
// fails with os.ErrClosed.
func (f *fdFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return &fs.PathError{Op: "close", Path: f.name, Err: os.ErrClosed}
	}
	f.closed = true
	// close(2) is not retried after EINTR: Linux has released the
	// descriptor by then.
	if err := unix.Close(f.fd); err != nil {
		return &fs.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// isDir reports whether the file is a directory.
func (f osFile) isDir() (bool, error) {
	st, err := f.fstat()
	return st.Mode&unix.S_IFMT == unix.S_IFDIR, err
}

// sameFile reports whether the file is the one at name (the same device
// and inode), and whether it could tell.
func (f osFile) sameFile(name string) (same, known bool) {
	a, err := f.fstat()
	if err != nil {
		return false, false
	}
	var b unix.Stat_t
	if err := retryEINTR(func() error { return unix.Stat(name, &b) }); err != nil {
		return false, err == unix.ENOENT
	}
	return a.Dev == b.Dev && a.Ino == b.Ino, true
}

// retryEINTR runs fn until it fails with another error than EINTR.
func retryEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}
