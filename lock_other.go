//go:build !unix

package strata

import (
	"fmt"
	"os"
	"path/filepath"
)

// dirLock is a store's exclusive hold on its directory: its .lock file.
type dirLock struct{ file *os.File }

// lockDir takes the lock of the store directory dir by creating its .lock
// file exclusively; where flock(2) is missing, a crashed store leaves the
// file behind, and Open fails with ErrLocked until it is removed by hand.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if os.IsExist(err) {
		return nil, fmt.Errorf("strata: %s: %w", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("strata: opening %s: %w", path, err)
	}
	return &dirLock{file: f}, nil
}

// lockListDir is lockDir after mkdir (if not nil), which makes the
// directory or says why it cannot be; it lists nothing (false).
func lockListDir(dir string, mkdir func() error) (*dirLock, []string, bool, error) {
	if mkdir != nil {
		if err := mkdir(); err != nil {
			return nil, nil, false, err
		}
	}
	l, err := lockDir(dir)
	return l, nil, false, err
}

// lockFilePath returns the path of the .lock file the lock holds, or ""
// when it holds none.
func (l *dirLock) lockFilePath() string {
	if l == nil {
		return ""
	}
	return l.file.Name()
}

// syncLockFile fsyncs the .lock file the lock holds.
func (l *dirLock) syncLockFile() error { return l.file.Sync() }

// unlockDir releases the lock; a nil one is none.
func unlockDir(l *dirLock) error {
	if l == nil {
		return nil
	}
	name := l.file.Name()
	err := l.file.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	return err
}
