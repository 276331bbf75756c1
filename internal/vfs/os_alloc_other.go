//go:build !linux

package vfs

// Allocate grows the file to size with ftruncate (sparse): outside Linux
// there is no portable fallocate.
func (f osFile) Allocate(size int64) error {
	cur, err := f.Size()
	if err != nil || size <= cur {
		return err
	}
	return f.Truncate(size)
}
