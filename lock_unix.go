//go:build unix

package strata

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes the advisory lock on dir's .lock file: flock(2), which also
// excludes a second open in the same process (each open file description
// locks on its own).
func lockDir(path string) (*os.File, error) {
	// open(2) and os.NewFile rather than os.OpenFile, which would offer
	// the file to the runtime's poller for nothing (four system calls).
	var fd int
	var err error
	for {
		if fd, err = unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644); err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("strata: opening %s: %w", path, &os.PathError{Op: "open", Path: path, Err: err})
	}
	f := os.NewFile(uintptr(fd), path)
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("strata: %s%s: %w", path, lockHolder(path), ErrLocked)
		}
		return nil, fmt.Errorf("strata: locking %s: %w", path, err)
	}
	return f, nil
}

// unlockDir releases the lock; a nil one is none.
func unlockDir(f *os.File) error {
	if f == nil {
		return nil
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return f.Close()
}
