package strata

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLockListsTheDirectory: the lock lists the store's directory through
// the descriptor it holds, every name but "." and "..", over several
// getdents64 calls when the names fill more than one buffer, and makes
// the directory only when it is not there.
func TestLockListsTheDirectory(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		name := fmt.Sprintf("%03d-%s", i, strings.Repeat("x", 40))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	}
	l, names, listed, err := lockListDir(dir, func() error {
		t.Fatal("mkdir of a directory that is there")
		return nil
	})
	require.NoError(t, err)
	require.True(t, listed)
	want, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, names, len(want))
	slices.Sort(names)
	for i, e := range want {
		require.Equal(t, e.Name(), names[i])
	}
	require.NoError(t, unlockDir(l))

	missing := filepath.Join(dir, "a", "b")
	made := 0
	l, names, listed, err = lockListDir(missing, func() error {
		made++
		return os.MkdirAll(missing, 0o755)
	})
	require.NoError(t, err)
	require.Equal(t, 1, made)
	require.True(t, listed)
	require.Empty(t, names)
	require.NoError(t, unlockDir(l))
}

// TestCleanReopenOpensOnlyItsDirectory: the lock of a reopen opens the
// store's directory, once, and a .lock file only when the directory's
// listing shows one.
func TestCleanReopenOpensOnlyItsDirectory(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, &Options{Sync: SyncNever})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", TopicConfig{}))
	require.NoError(t, s.Close())

	orig := openRetry
	defer func() { openRetry = orig }()
	var opened []string
	openRetry = func(path string, flags int, mode uint32) (int, error) {
		opened = append(opened, path)
		return orig(path, flags, mode)
	}
	reopen := func() {
		opened = nil
		s, err := Open(dir, &Options{Sync: SyncNever})
		require.NoError(t, err)
		require.True(t, s.clean)
		require.NoError(t, s.Close())
	}
	reopen()
	require.Equal(t, []string{dir}, opened, "no .lock: nothing but the directory")

	lockPath := filepath.Join(dir, lockFile)
	require.NoError(t, os.WriteFile(lockPath, nil, 0o644))
	reopen()
	require.Equal(t, []string{dir, lockPath}, opened, "a .lock listed is locked too")
}
