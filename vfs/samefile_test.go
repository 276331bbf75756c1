package vfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSameFile: an open file is the one its name names until another file
// is renamed over the name, or the name is removed; a wrapper cannot tell.
func TestSameFile(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "a")
		writeFile(t, fsys, name, []byte("one"))
		f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
		require.NoError(t, err)
		defer f.Close()
		same, known := SameFile(fsys, f, name)
		require.True(t, known)
		require.True(t, same)

		other := filepath.Join(dir, "b")
		writeFile(t, fsys, other, []byte("two"))
		require.NoError(t, fsys.Rename(other, name))
		same, known = SameFile(fsys, f, name)
		require.True(t, known)
		require.False(t, same, "another file renamed over the name")

		require.NoError(t, fsys.Remove(name))
		same, known = SameFile(fsys, f, name)
		require.True(t, known)
		require.False(t, same, "the name is gone")

		g, err := NoSync(fsys).OpenFile(other+"x", os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		defer g.Close()
		_, known = SameFile(NoSync(fsys), g, other+"x")
		require.False(t, known, "a wrapper's file")
	})
}
