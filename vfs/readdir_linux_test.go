package vfs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadDirOSLarge lists a directory whose entries take several
// getdents64 calls: every name once, sorted.
func TestReadDirOSLarge(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 300 {
		name := fmt.Sprintf("%020d.%s", 997*i%300, "timeindex.deleted")
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
		want = append(want, name)
	}
	slices.Sort(want)
	names, err := OS.ReadDir(dir)
	require.NoError(t, err)
	require.Equal(t, want, names)
}

// TestReadDirOSAllocations: a listing of a partition's six files costs the
// names and the slice holding them, no *os.File or DirEntry.
func TestReadDirOSAllocations(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex",
		"partition.metadata", "recovery-point-offset-checkpoint", "log-start-offset-checkpoint"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	}
	allocs := testing.AllocsPerRun(20, func() {
		names, err := OS.ReadDir(dir)
		if err != nil || len(names) != 6 {
			t.Fatal(names, err)
		}
	})
	require.LessOrEqual(t, allocs, 8.0) // the path, the slice, six names
}
