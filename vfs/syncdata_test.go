package vfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// countSyncFile is a File that counts its Syncs, as a test's wrapper does.
type countSyncFile struct {
	File
	n *int
}

func (f countSyncFile) Sync() error {
	*f.n++
	return f.File.Sync()
}

// TestSyncData checks that SyncData makes a file's contents and size
// durable on both file systems, fails on a closed file, and goes through
// the Sync of a File that wraps another, so that wrappers which count,
// fail or drop syncs (NoSync) see it.
func TestSyncData(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		f, err := fsys.OpenFile(filepath.Join(dir, "f"), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("hello"), 1<<16)
		require.NoError(t, err)
		require.NoError(t, SyncData(f))
		require.NoError(t, f.Close())
		require.Error(t, SyncData(f), "a closed file")
	})

	m := NewMem()
	write := func(fsys FS, name string) File {
		f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("durable"), 0)
		require.NoError(t, err)
		return f
	}
	require.NoError(t, SyncData(write(m, "/synced")))
	require.NoError(t, SyncData(write(NoSync(m), "/nosync")))
	n := 0
	require.NoError(t, SyncData(countSyncFile{write(m, "/counted"), &n}))
	require.Equal(t, 1, n, "the wrapper's Sync")
	require.NoError(t, m.SyncDir("/"))
	after := m.Crash()
	for name, size := range map[string]int64{"/synced": 7, "/nosync": 0, "/counted": 7} {
		fi, err := after.Stat(name)
		require.NoError(t, err)
		require.Equal(t, size, fi.Size, name)
	}
}
