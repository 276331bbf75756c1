//go:build unix

package vfs

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openFD is open(2) with O_CLOEXEC, again after EINTR; its error is a
// *fs.PathError.
func openFD(name string, flag int, mode uint32) (int, error) {
	for {
		fd, err := unix.Open(name, flag|unix.O_CLOEXEC, mode)
		switch err {
		case nil:
			return fd, nil
		case unix.EINTR:
			continue
		}
		return -1, &fs.PathError{Op: "open", Path: name, Err: err}
	}
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

// readFileOS reads the file at path with four system calls (open, fstat,
// pread, close; more preads only if one returns less than asked), where
// ReadFile through an os.File takes six. A directory fails with EISDIR, as
// OpenFile does. It always reads (true).
func readFileOS(path string) ([]byte, bool, error) {
	fd, err := openFD(path, unix.O_RDONLY, 0)
	if err != nil {
		return nil, true, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, true, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return nil, true, &fs.PathError{Op: "open", Path: path, Err: unix.EISDIR}
	}
	data := make([]byte, st.Size)
	for n := 0; n < len(data); {
		m, err := unix.Pread(fd, data[n:], int64(n))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, true, &fs.PathError{Op: "read", Path: path, Err: err}
		case m == 0:
			return data[:n], true, nil // the file is shorter than it was
		}
		n += m
	}
	return data, true, nil
}
