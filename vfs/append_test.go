package vfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteAtAppendFails: WriteAt of a file opened with O_APPEND fails and
// writes nothing, on the OS as on a Mem (pwrite(2) on Linux would write at
// the end whatever the offset).
func TestWriteAtAppendFails(t *testing.T) {
	eachFS(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "f")
		writeFile(t, fsys, name, []byte("hello"))
		f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		n, err := f.WriteAt([]byte("J"), 0)
		require.Error(t, err)
		require.Zero(t, n)
		require.NoError(t, f.Close())
		require.Equal(t, "hello", string(readFile(t, fsys, name)))
	})
}
