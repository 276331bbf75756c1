package index

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// requireNoFile fails unless nothing is at path.
func requireNoFile(t *testing.T, fsys vfs.FS, path string) {
	t.Helper()
	_, err := fsys.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestDeferredIndexHasNoFileUntilAnEntry: a deferred writable index takes
// the room of a preallocated one, and Sync, Trim and Close leave no file
// while it has no entry; its first entry (or a reservation) creates the
// file, which then holds the entries as OpenOffset/OpenTime read them.
func TestDeferredIndexHasNoFileUntilAnEntry(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		opath, tpath := filepath.Join(dir, "a.index"), filepath.Join(dir, "a.timeindex")
		o, err := DeferOffset(fsys, opath, 100, 800, true)
		require.NoError(t, err)
		ti, err := DeferTime(fsys, tpath, 100, 1200, true)
		require.NoError(t, err)
		require.False(t, o.OnDisk())
		require.Equal(t, 100, o.MaxEntries())
		require.Equal(t, 100, ti.MaxEntries())
		require.False(t, o.Full())
		require.Equal(t, int64(100), o.lastOffset())
		ts, off := ti.LastEntry()
		require.Equal(t, int64(NoTimestamp), ts)
		require.Equal(t, int64(100), off)
		o.TruncateTo(50)
		require.NoError(t, o.Sync())
		require.NoError(t, ti.Sync())
		requireNoFile(t, fsys, opath)
		requireNoFile(t, fsys, tpath)

		// Trim and Close of an index that never had an entry: still no file.
		require.NoError(t, ti.Trim())
		require.ErrorIs(t, ti.MaybeAppend(5, 101, true), ErrSealed)
		require.NoError(t, ti.Close())
		requireNoFile(t, fsys, tpath)

		require.NoError(t, o.Append(110, 4096))
		require.True(t, o.OnDisk())
		require.Equal(t, 1, o.Entries())
		require.NoError(t, o.Close())
		r, err := OpenOffset(fsys, opath, 100, 0, false)
		require.NoError(t, err)
		require.Equal(t, 1, r.Entries())
		gotOff, gotPos := r.Entry(0)
		require.Equal(t, int64(110), gotOff)
		require.Equal(t, int32(4096), gotPos)
		require.NoError(t, r.Close())

		// A reservation creates the file too: the entry it reserves for
		// must be able to go to disk.
		ti, err = DeferTime(fsys, tpath, 100, 1200, true)
		require.NoError(t, err)
		require.NoError(t, ti.Reserve())
		require.True(t, ti.OnDisk())
		_, err = fsys.Stat(tpath)
		require.NoError(t, err)
		require.NoError(t, ti.Close())
	})
}

// TestDeferredReadOnlyIndex: a read-only deferred index is sealed, empty,
// and creates nothing.
func TestDeferredReadOnlyIndex(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		path := filepath.Join(dir, "b.index")
		o, err := DeferOffset(fsys, path, 0, 0, false)
		require.NoError(t, err)
		require.True(t, o.Full())
		require.Zero(t, o.MaxEntries())
		require.ErrorIs(t, o.Append(1, 1), ErrSealed)
		slot, n := o.Floor(10)
		require.Equal(t, -1, slot)
		require.Zero(t, n)
		require.NoError(t, o.Create()) // nothing to create: read-only
		require.NoError(t, o.Close())
		requireNoFile(t, fsys, path)

		_, err = DeferTime(fsys, path, -1, 0, true)
		require.Error(t, err)
	})
}

// TestDeferredIndexReadersWhileCreated: readers of a deferred index may run
// while the writer's first entry creates and maps its file (run with -race).
func TestDeferredIndexReadersWhileCreated(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		o, err := DeferOffset(fsys, filepath.Join(dir, "c.index"), 0, 800, true)
		require.NoError(t, err)
		ti, err := DeferTime(fsys, filepath.Join(dir, "c.timeindex"), 0, 1200, true)
		require.NoError(t, err)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 1000 {
				if slot, _ := o.Floor(5); slot >= 0 {
					off, _ := o.Entry(slot)
					require.Equal(t, int64(5), off)
				}
				ti.Lookup(100)
				ti.LastEntry()
			}
		}()
		require.NoError(t, o.Append(5, 100))
		require.NoError(t, ti.MaybeAppend(100, 5, false))
		<-done
		require.NoError(t, o.Close())
		require.NoError(t, ti.Close())
	})
}
