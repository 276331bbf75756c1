package vfs

import (
	"errors"
	"io/fs"
)

// MapReadOnly maps the first size bytes of f read-only and shared, for a
// reader of a file that another process writes: f may be open read-only
// (os.O_RDONLY), bytes the file gains later show in the mapping, and the
// mapping may reach past the end of the file. Touching a page wholly past
// the file's end is SIGBUS on the OS, so the caller touches only bytes it
// knows the file holds and cannot lose (see Options.ReadOnly in package
// strata). Release the mapping with f's Unmap.
//
// Only the operating system's files map this way (on unix); for any
// other, such as a Mem's, a wrapper's or on Windows, MapReadOnly fails
// with an error matching errors.ErrUnsupported: read such a file with
// ReadAt instead.
func MapReadOnly(f File, size int) ([]byte, error) {
	if m, ok := f.(interface{ MapReadOnly(int) ([]byte, error) }); ok {
		return m.MapReadOnly(size)
	}
	return nil, &fs.PathError{Op: "mmap", Path: f.Name(), Err: errors.ErrUnsupported}
}
