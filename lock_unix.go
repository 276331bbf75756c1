//go:build unix

package strata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// dirLock is a store's exclusive hold on its directory.
type dirLock struct {
	// dir is the descriptor of the store's directory, flock(2)ed; -1
	// where the directory could not be locked and file is the lock.
	dir int
	// file is the descriptor of the directory's .lock file, flocked too,
	// when it has one: what an older Strata or a Kafka broker left, or
	// what this store created where dir could not be locked; -1 when
	// there is none.
	file int
	path string // the .lock file's path
}

// lockDir takes the advisory lock on the store directory dir: flock(2) on
// the directory itself, which creates nothing (flock works on a
// directory's descriptor on Linux, the BSDs and macOS). Each open file
// description locks on its own, so a second Open in the same process is
// excluded as one in another process is. Where the directory has a .lock
// file (a Kafka log directory, or a store an older Strata has opened,
// which locks only that file), the file is locked as well, so that the
// two versions exclude each other. Where the directory cannot be locked
// (NFS; any error but EWOULDBLOCK) the .lock file, created if needed, is
// the lock, as older versions take it.
func lockDir(dir string) (*dirLock, error) {
	l, _, _, err := lockListDir(dir, nil)
	return l, err
}

// lockListDir is lockDir that also lists dir through the descriptor it
// locks, where it can (Linux; listed says so), and learns from that
// listing whether there is a .lock file to lock, instead of trying to
// open one: a reopen costs no second open of the directory and no failing
// open of .lock. The listing is taken under the lock, as a listing after
// lockDir would be. When dir cannot be opened, mkdir (if not nil) is
// called to make it, or say why it cannot be, before a second try: a
// directory that is there costs no look before the open.
func lockListDir(dir string, mkdir func() error) (_ *dirLock, names []string, listed bool, _ error) {
	l := &dirLock{dir: -1, file: -1, path: filepath.Join(dir, lockFile)}
	const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	fd, err := openRetry(dir, dirFlags, 0)
	if err != nil && mkdir != nil {
		if merr := mkdir(); merr != nil {
			return nil, nil, false, merr
		}
		fd, err = openRetry(dir, dirFlags, 0)
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("strata: opening %s: %w", dir, &os.PathError{Op: "open", Path: dir, Err: err})
	}
	create := 0
	if err := flockDir(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil, false, fmt.Errorf("strata: %s%s: %w", dir, lockHolder(dir), ErrLocked)
		}
		create = unix.O_CREAT
	} else {
		l.dir = fd
		if names, listed, err = listFD(fd); err != nil {
			_ = unlockDir(l)
			return nil, nil, false, fmt.Errorf("strata: listing %s: %w", dir, &os.PathError{Op: "readdirent", Path: dir, Err: err})
		}
	}
	if !listed || slices.Contains(names, lockFile) {
		if err := l.lockFile(create); err != nil {
			_ = unlockDir(l)
			return nil, nil, false, err
		}
	}
	return l, names, listed, nil
}

// flockDir is flock(2) of a store directory's descriptor; tests make it
// fail to take the .lock file's way.
var flockDir = unix.Flock

// lockFile opens and flocks the .lock file, creating it if create is
// O_CREAT; without it, a missing file is no lock.
func (l *dirLock) lockFile(create int) error {
	// open(2) rather than os.OpenFile, which would offer the file to the
	// runtime's poller for nothing (four system calls).
	fd, err := openRetry(l.path, unix.O_RDWR|unix.O_CLOEXEC|create, 0o644)
	if err == unix.ENOENT && create == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("strata: opening %s: %w", l.path, &os.PathError{Op: "open", Path: l.path, Err: err})
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("strata: %s%s: %w", l.path, lockHolder(l.path), ErrLocked)
		}
		return fmt.Errorf("strata: locking %s: %w", l.path, err)
	}
	l.file = fd
	return nil
}

// openRetry is open(2), again after EINTR; tests count its calls.
var openRetry = func(path string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Open(path, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// lockFilePath returns the path of the .lock file the lock holds, or ""
// when it holds none.
func (l *dirLock) lockFilePath() string {
	if l == nil || l.file < 0 {
		return ""
	}
	return l.path
}

// syncLockFile fsyncs the .lock file the lock holds.
func (l *dirLock) syncLockFile() error {
	if err := unix.Fsync(l.file); err != nil {
		return &os.PathError{Op: "sync", Path: l.path, Err: err}
	}
	return nil
}

// unlockDir releases the lock; a nil one is none. Each lock is released
// with LOCK_UN before its descriptor is closed: a child process forked
// meanwhile shares the descriptor until it execs, and would hold the lock
// that long. The .lock file, if any, stays.
func unlockDir(l *dirLock) error {
	if l == nil {
		return nil
	}
	var err error
	for _, fd := range []int{l.file, l.dir} {
		if fd >= 0 {
			_ = unix.Flock(fd, unix.LOCK_UN)
			err = errors.Join(err, unix.Close(fd))
		}
	}
	return err
}
