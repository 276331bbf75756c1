package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"syscall"
)

// OS is the operating system's file system: open(2), pread and pwrite,
// fsync, and mmap(2) for File.Map. On Linux a File is the bare descriptor
// (no *os.File, and so no finalizer: a File never closed keeps its
// descriptor); elsewhere it is an *os.File. Do not reassign it. Outside Unix
// (Windows) File.Map, SyncMap and Unmap fail with an error matching
// errors.ErrUnsupported, and so does every File.Allocate outside Linux.
var OS FS = osFS{}

type osFS struct{}

// OpenFile opens a file with the flags and permissions os.OpenFile takes.
// Opening a directory fails with EISDIR, as it does on a Mem.
func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := openFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		// Only a read-only open can succeed on a directory.
		dir, err := f.isDir()
		if err == nil && dir {
			err = &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
		}
		if err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	return f, nil
}

func (osFS) Remove(name string) error             { return removeOS(name) }
func (osFS) RemoveAll(name string) error          { return os.RemoveAll(name) }
func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// MkdirAll is os.MkdirAll that tries mkdir(2) first: a new directory whose
// parent is there (what Strata creates, after an open that found nothing)
// takes that one call, where os.MkdirAll looks at the directory and at its
// parent before it. Anything else (a missing parent, a directory or a file
// of that name) goes on to os.MkdirAll, which reports as it always does.
func (osFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := os.Mkdir(dir, perm); err == nil {
		return nil
	}
	return os.MkdirAll(dir, perm)
}

func (osFS) ReadDir(dir string) ([]string, error) { return readDirOS(dir) }

func (osFS) Stat(name string) (FileInfo, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Size: fi.Size(), IsDir: fi.IsDir()}, nil
}

// SyncDir opens the directory and fsyncs it. Naming a file fails with ENOTDIR.
func (osFS) SyncDir(dir string) error {
	d, err := openFile(dir, os.O_RDONLY|dirFlag, 0)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// WriteMap copies p into m at off, turning a memory fault into an error
// (debug.SetPanicOnFault) rather than a crash: see faultError.
func (f osFile) WriteMap(m []byte, off int, p []byte) (err error) {
	if off < 0 || off+len(p) > len(m) {
		return &fs.PathError{Op: "writemap", Path: f.Name(), Err: syscall.EINVAL}
	}
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if recover() != nil {
			err = f.faultError(off, len(p))
		}
	}()
	copy(m[off:], p)
	return nil
}

// faultError is the error of a fault that a write of n bytes into a
// mapping at off met: the kernel could not give a page of the file a block
// (SIGBUS), because the disk is full or an I/O error happened, or because
// the page lies past the end of the file. It matches ErrFault, and also
// syscall.ENOSPC when the file system has no free blocks left.
func (f osFile) faultError(off, n int) error {
	var err error
	if f.noSpace() {
		err = fmt.Errorf("%w: the file system could not back the page of bytes %d to %d: %w", ErrFault, off, off+n, syscall.ENOSPC)
	} else {
		err = fmt.Errorf("%w: the file system could not back the page of bytes %d to %d (disk full, an I/O error, or past the end of the file)", ErrFault, off, off+n)
	}
	return &fs.PathError{Op: "writemap", Path: f.Name(), Err: err}
}
