// Package vfs is Strata's file-system seam.
//
// Every file of a store's data and metadata is read and written through an
// [FS] (the one exception is the directory lock, which on [OS] is taken with
// the os package and on other file systems not at all): the operating
// system's file system in production ([OS]), or an in-memory file system
// ([Mem]) for tests and stores that need no disk. The in-memory one keeps, besides the current
// contents of every file, what has been made durable by Sync and SyncDir, so a
// test can "crash" it and see exactly what a power cut would have left; it can
// also inject errors (a failed write, a failed fsync, a full disk) before any
// operation.
//
// Index files and segment logs are memory-mapped, and the mapping is part
// of the seam: on the OS file system [File.Map] is mmap(2), in memory it is a
// slice that aliases the file's contents. Appends into a log's mapping go
// through [File.WriteMap], which the in-memory file system serialises with
// Sync and which turns a memory fault into an error.
//
// Both implementations return the os package's errors (*fs.PathError and
// *os.LinkError wrapping a syscall.Errno), so errors.Is(err, fs.ErrNotExist),
// fs.ErrExist, syscall.ENOSPC and the like match the same way on both; the
// behavioural tests of this package run against both.
package vfs

import (
	"errors"
	"io"
	"os"
)

// FS is the set of file-system operations Strata uses. Paths are slash- or
// OS-separated paths as the os package takes them.
type FS interface {
	// OpenFile opens a file with the flags of os.OpenFile (os.O_RDONLY,
	// os.O_WRONLY, os.O_RDWR, os.O_CREATE, os.O_EXCL and os.O_TRUNC are
	// honoured). Opening a directory fails with EISDIR.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// RemoveAll removes a file or a directory and everything below it. A
	// missing name is not an error.
	RemoveAll(name string) error
	// Rename renames a file or directory, replacing a target file if it
	// exists. Renaming onto a directory fails with EEXIST.
	Rename(oldname, newname string) error
	// MkdirAll creates a directory and its missing parents.
	MkdirAll(dir string, perm os.FileMode) error
	// ReadDir returns the names of the entries of a directory, sorted.
	ReadDir(dir string) ([]string, error)
	// Stat returns the size of a file and whether it is a directory.
	Stat(name string) (FileInfo, error)
	// SyncDir makes the directory's entries durable (the creations, renames and
	// removals in it), as fsync on the directory does. Naming a file fails with
	// ENOTDIR.
	SyncDir(dir string) error
}

// FileInfo is what Stat returns.
type FileInfo struct {
	Size  int64
	IsDir bool
}

// File is an open file. Reads and writes are positional (pread and pwrite);
// there is no file position to share, and its methods are safe for concurrent
// use. ReadAt returns io.EOF with fewer than len(p) bytes, as os.File does;
// WriteAt past the end fills the gap with zeros.
type File interface {
	io.ReaderAt
	io.WriterAt
	// Name returns the path the file was opened with.
	Name() string
	// Size returns the file's current size.
	Size() (int64, error)
	// Truncate changes the file's size, extending it with zeros if it grows.
	Truncate(size int64) error
	// Allocate extends the file to at least size bytes of zeros, with the
	// blocks reserved on disk (fallocate(2)), so that later writes inside
	// it change no file size and allocate nothing, and a write through a
	// mapping of it cannot meet a full disk. It never shrinks a file. Where
	// blocks cannot be reserved (no fallocate) it fails with an error that
	// matches errors.ErrUnsupported and changes nothing.
	Allocate(size int64) error
	// AllocateRange reserves the blocks of the n bytes at off on disk, as
	// fallocate(2) does: holes among them get blocks of zeros, bytes
	// already there stay, and the file grows to off+n if it is shorter. A
	// write through a mapping into them then cannot meet a full disk, which
	// is what it is for: a file made sparse by Truncate is reserved ahead of
	// the writes into it. A full disk is an error matching syscall.ENOSPC.
	// Where blocks cannot be reserved it fails with an error that matches
	// errors.ErrUnsupported and changes nothing.
	AllocateRange(off, n int64) error
	// Sync makes the file's contents durable (fsync).
	Sync() error
	// Map maps the first size bytes of the file read-write and shared: writes
	// to the slice change the file, and writes to the file show in the slice.
	// The file must be open read-write; mapping zero bytes returns nil. The
	// mapping may reach past the end of the file, reserving room for it to
	// grow into (as mmap(2) does): bytes the file gains later show in it.
	// Accessing the slice beyond the file's current size is undefined (SIGBUS
	// on the OS), so shrink a mapped file only below what readers touch. A
	// Mem cannot grow a mapped file past its largest mapping ([ErrMapped]).
	Map(size int) ([]byte, error)
	// WriteMap copies p into the mapping m at off, as copy(m[off:], p) does
	// (p must fit), and returns a memory fault (SIGBUS on the OS: the file
	// is shorter than the mapping there, or a page could not be read in, or
	// a hole of a sparse file could not be given a block) as an error
	// matching ErrFault instead of crashing the process; on a file system
	// with no free blocks left it matches syscall.ENOSPC too. Bytes
	// written this way are the file's, as WriteAt's are; on the OS they may
	// be written while another goroutine fsyncs the file, and a Mem
	// serialises the two.
	WriteMap(m []byte, off int, p []byte) error
	// SyncMap makes the changes written through a mapping durable (msync). A
	// nil mapping is a no-op. It works after Close.
	SyncMap(m []byte) error
	// Unmap releases a mapping returned by Map; a nil mapping is a no-op, a
	// slice Map did not return fails with EINVAL. It works after Close.
	// Touching the slice afterwards is a crash on the OS: release it only when
	// no reader can hold it.
	Unmap(m []byte) error
	// Close closes the file. Mappings stay valid until unmapped.
	Close() error
}

// Errors returned by the in-memory file system and by injected failures,
// wrapped in an *fs.PathError: match them with errors.Is.
var (
	// ErrInjected is the error the injectors of this package return.
	ErrInjected = errors.New("vfs: injected failure")
	// ErrCrashed is returned by every operation on a Mem after Crash, and on
	// the files opened from it.
	ErrCrashed = errors.New("vfs: file system has crashed")
	// ErrFault is returned by File.WriteMap when the memory of the mapping
	// faults.
	ErrFault = errors.New("vfs: memory fault in a file mapping")
	// ErrMapped is returned by a Mem when a WriteAt or Truncate would grow a
	// file that has a live mapping past the size it had when mapped.
	ErrMapped = errors.New("vfs: cannot grow a mapped file past its mapped size: unmap it first")
)
