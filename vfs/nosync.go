package vfs

import "os"

// NoSync returns a file system that is fsys without durability: File.Sync,
// File.SyncMap and FS.SyncDir do nothing and return nil; every other
// operation is fsys's. What is written still reaches fsys at once (on the
// OS, the kernel's page cache, which a crash of the process does not lose,
// and which the kernel writes back to the disk when it likes), and a
// rename still replaces a file whole. Strata opens partitions, and a store
// keeps its own files, on it under the SyncNever flush policy.
func NoSync(fsys FS) FS {
	if n, ok := fsys.(noSyncFS); ok {
		return n
	}
	return noSyncFS{fsys}
}

type noSyncFS struct{ FS }

type noSyncFile struct{ File }

func (n noSyncFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := n.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

func (noSyncFS) SyncDir(string) error { return nil }

func (noSyncFile) Sync() error          { return nil }
func (noSyncFile) SyncMap([]byte) error { return nil }

// releaseMap releases the wrapped file's mapping, which NoSync leaves as
// it is.
func (n noSyncFile) releaseMap(m []byte) { ReleaseMap(n.File, m) }
