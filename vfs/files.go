package vfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// ReadFile returns the contents of the file at path.
func ReadFile(fsys FS, path string) ([]byte, error) {
	if n, ok := fsys.(noSyncFS); ok {
		fsys = n.FS // a read is the same without fsyncs
	}
	if fsys == OS {
		if data, ok, err := readFileOS(path); ok {
			return data, err
		}
	}
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	data := make([]byte, size)
	if _, err := f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return data, nil
}

// TempSuffix ends the name of the temporary file that WriteFileAtomic
// writes before renaming it over the file it replaces.
const TempSuffix = ".tmp"

// WriteFileAtomic replaces the file at path with data so that a crash
// leaves either the old contents or the new, whole: it writes
// path+TempSuffix, fsyncs it, renames it over path and fsyncs the directory.
// If it fails before the rename, it removes the temporary file (best
// effort: a crash, or a failing removal, can still leave it).
func WriteFileAtomic(fsys FS, path string, data []byte) error {
	if err := replace(fsys, path, data, true); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(path))
}

// ReplaceFile replaces the file at path with data as WriteFileAtomic does,
// but without an fsync: the new contents are the file's once it returns,
// but a power loss may leave the old contents, the new, or a file with
// neither (empty or torn). It is for files whose contents can be rebuilt.
func ReplaceFile(fsys FS, path string, data []byte) error {
	return replace(fsys, path, data, false)
}

// replace writes data to path+TempSuffix, fsyncs it if sync is set, and
// renames it over path; on failure it removes the temporary file.
func replace(fsys FS, path string, data []byte, sync bool) error {
	tmp := path + TempSuffix
	f, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err != nil {
		_ = fsys.Remove(tmp)
	}
	return err
}
