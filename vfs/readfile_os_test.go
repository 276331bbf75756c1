//go:build unix

package vfs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadFileOS: ReadFile on the OS (or NoSync of it) reads with its own
// system calls what os.ReadFile reads, and fails as OpenFile does on a
// missing file or a directory.
func TestReadFileOS(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, 100<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	for name, data := range map[string][]byte{"empty": nil, "small": []byte(`{"version": 2}`), "big": big} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		got, ok, err := readFileOS(path)
		require.True(t, ok)
		require.NoError(t, err)
		require.Equal(t, len(data), len(got), name)
		require.Equal(t, string(data), string(got), name)
		for _, fsys := range []FS{OS, NoSync(OS)} {
			got, err := ReadFile(fsys, path)
			require.NoError(t, err)
			require.Equal(t, string(data), string(got), name)
		}
	}
	_, _, err := readFileOS(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = ReadFile(OS, filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, _, err = readFileOS(dir)
	require.ErrorIs(t, err, syscall.EISDIR)
	_, err = OS.OpenFile(dir, os.O_RDONLY, 0)
	require.ErrorIs(t, err, syscall.EISDIR)
}
