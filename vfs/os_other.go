//go:build !unix

package vfs

import (
	"errors"
	"io/fs"
)

const dirFlag = 0

// Map is not supported outside unix.
func (f osFile) Map(size int) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	return nil, &fs.PathError{Op: "mmap", Path: f.Name(), Err: errors.ErrUnsupported}
}

// SyncMap is not supported outside unix.
func (f osFile) SyncMap(m []byte) error {
	if len(m) == 0 {
		return nil
	}
	return &fs.PathError{Op: "msync", Path: f.Name(), Err: errors.ErrUnsupported}
}

// Unmap is not supported outside unix.
func (f osFile) Unmap(m []byte) error {
	if len(m) == 0 {
		return nil
	}
	return &fs.PathError{Op: "munmap", Path: f.Name(), Err: errors.ErrUnsupported}
}
