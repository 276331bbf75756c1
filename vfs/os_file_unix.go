//go:build unix && !linux

package vfs

import "os"

// openOS is os.OpenFile without the poller: open(2) with O_CLOEXEC, then
// os.NewFile. os.OpenFile offers every file to the runtime's poller, which
// costs a regular file four more system calls (setting O_NONBLOCK, an
// epoll_ctl that fails, clearing it again) and gains it nothing: the
// kernel does not poll regular files or directories.
func openOS(name string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := openFD(name, flag, modeBits(perm))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// control runs fn with the file's descriptor (SyscallConn().Control); on
// a closed file it fails with os.ErrClosed.
func (f osFile) control(fn func(fd uintptr)) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	return conn.Control(fn)
}
