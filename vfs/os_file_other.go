//go:build !linux

package vfs

import "os"

// osFile is a File of the OS outside Linux: an *os.File.
type osFile struct {
	*os.File
}

// openFile opens name as a File; see openOS.
func openFile(name string, flag int, perm os.FileMode) (osFile, error) {
	f, err := openOS(name, flag, perm)
	if err != nil {
		return osFile{}, err
	}
	return osFile{f}, nil
}

// Size returns the file's size (fstat).
func (f osFile) Size() (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// isDir reports whether the file is a directory.
func (f osFile) isDir() (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}

// sameFile reports whether the file is the one at name, and whether it
// could tell.
func (f osFile) sameFile(name string) (same, known bool) {
	a, err := f.Stat()
	if err != nil {
		return false, false
	}
	b, err := os.Stat(name)
	if err != nil {
		return false, os.IsNotExist(err)
	}
	return os.SameFile(a, b), true
}
