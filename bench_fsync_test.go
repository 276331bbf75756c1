package strata_test

import (
	"os"
	"sync/atomic"

	"github.com/stratalog/strata/vfs"
)

// syncCountFS is a file system that counts the fsyncs of files and
// directories and the msyncs made through it: what a benchmark reports as
// fsyncs/op.
type syncCountFS struct {
	vfs.FS
	n *atomic.Int64
}

// newSyncCountFS returns fsys counting its syncs.
func newSyncCountFS(fsys vfs.FS) syncCountFS { return syncCountFS{fsys, new(atomic.Int64)} }

// syncs is how many syncs were made through f.
func (f syncCountFS) syncs() int64 { return f.n.Load() }

func (f syncCountFS) OSFiles() bool { return vfs.IsOS(f.FS) }

func (f syncCountFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return syncCountFile{file, f.n}, nil
}

func (f syncCountFS) SyncDir(dir string) error {
	f.n.Add(1)
	return f.FS.SyncDir(dir)
}

type syncCountFile struct {
	vfs.File
	n *atomic.Int64
}

func (f syncCountFile) Sync() error {
	f.n.Add(1)
	return f.File.Sync()
}

func (f syncCountFile) SyncMap(m []byte) error {
	if m != nil {
		f.n.Add(1)
	}
	return f.File.SyncMap(m)
}
