//go:build !unix

package strata

import (
	"fmt"
	"os"
)

// lockDir takes the directory's lock file exclusively by creating it; where
// flock(2) is missing, a crashed store leaves the file behind, and Open
// fails with ErrLocked until it is removed by hand.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if os.IsExist(err) {
		return nil, fmt.Errorf("strata: %s: %w", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("strata: opening %s: %w", path, err)
	}
	return f, nil
}

// unlockDir releases the lock; a nil one is none.
func unlockDir(f *os.File) error {
	if f == nil {
		return nil
	}
	name := f.Name()
	err := f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	return err
}
