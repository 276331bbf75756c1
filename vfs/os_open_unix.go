//go:build unix

package vfs

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openOS is os.OpenFile without the poller: open(2) with O_CLOEXEC, then
// os.NewFile. os.OpenFile offers every file to the runtime's poller, which
// costs a regular file four more system calls (setting O_NONBLOCK, an
// epoll_ctl that fails, clearing it again) and gains it nothing: the
// kernel does not poll regular files or directories.
func openOS(name string, flag int, perm os.FileMode) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(name, flag|unix.O_CLOEXEC, modeBits(perm))
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// modeBits is perm as open(2) takes it.
func modeBits(perm os.FileMode) uint32 {
	m := uint32(perm.Perm())
	if perm&os.ModeSetuid != 0 {
		m |= unix.S_ISUID
	}
	if perm&os.ModeSetgid != 0 {
		m |= unix.S_ISGID
	}
	if perm&os.ModeSticky != 0 {
		m |= unix.S_ISVTX
	}
	return m
}

// removeOS is os.Remove, which tries rmdir(2) whenever unlink(2) fails,
// without that second call when the name does not exist.
func removeOS(name string) error {
	var err error
	for {
		err = unix.Unlink(name)
		if err != unix.EINTR {
			break
		}
	}
	switch err {
	case nil:
		return nil
	case unix.ENOENT:
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return os.Remove(name)
}
