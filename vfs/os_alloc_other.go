//go:build !linux

package vfs

import (
	"errors"
	"io/fs"
)

// Allocate fails with an error matching errors.ErrUnsupported: outside Linux
// there is no portable fallocate, and a sparse file would not reserve the
// blocks that Allocate promises.
func (f osFile) Allocate(size int64) error {
	return &fs.PathError{Op: "fallocate", Path: f.Name(), Err: errors.ErrUnsupported}
}

// AllocateRange fails with an error matching errors.ErrUnsupported, as
// Allocate does.
func (f osFile) AllocateRange(off, n int64) error {
	return &fs.PathError{Op: "fallocate", Path: f.Name(), Err: errors.ErrUnsupported}
}

// noSpace reports false: outside Linux the free space is not looked at.
func (f osFile) noSpace() bool { return false }
