package index

import (
	"io"
	"os"
	"testing"

	"github.com/stratalog/strata/vfs"
	"github.com/stretchr/testify/require"
)

// eachFS runs fn as a subtest on every file system the index must work on,
// with a directory to put files in.
func eachFS(t *testing.T, fn func(t *testing.T, fsys vfs.FS, dir string)) {
	t.Helper()
	t.Run("fs=mem", func(t *testing.T) {
		fsys := vfs.NewMem()
		require.NoError(t, fsys.MkdirAll("/idx", 0o755))
		fn(t, fsys, "/idx")
	})
	t.Run("fs=os", func(t *testing.T) { fn(t, vfs.OS, t.TempDir()) })
}

// fileBytes returns the contents of the file at path.
func fileBytes(t testing.TB, fsys vfs.FS, path string) []byte {
	t.Helper()
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	size, err := f.Size()
	require.NoError(t, err)
	b := make([]byte, size)
	_, err = f.ReadAt(b, 0)
	if err == io.EOF {
		err = nil
	}
	require.NoError(t, err)
	return b
}

// writeFile replaces the contents of the file at path with b.
func writeFile(t testing.TB, fsys vfs.FS, path string, b []byte) {
	t.Helper()
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	require.NoError(t, err)
	_, err = f.WriteAt(b, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// benchFS returns the file system and directory benchmarks use.
// They map real files, as production does.
func benchFS(b *testing.B) (vfs.FS, string) {
	return vfs.OS, b.TempDir()
}
