//go:build unix

package strata

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestLockFileWhereTheDirectoryCannotBeLocked: where flock(2) of the
// directory fails with anything but EWOULDBLOCK (NFS), the store creates
// and locks a .lock file instead: a second Open fails with ErrLocked, and
// the marker is a second name of the file.
func TestLockFileWhereTheDirectoryCannotBeLocked(t *testing.T) {
	flockDir = func(int, int) error { return unix.ENOLCK }
	defer func() { flockDir = unix.Flock }()
	dir := t.TempDir()
	s, err := Open(dir, nil)
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, lockFile))
	require.NoError(t, err, "a lock file")
	_, err = Open(dir, nil)
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, s.CreateTopic("t", TopicConfig{}))
	require.NoError(t, s.Close())
	lock, err := os.Stat(filepath.Join(dir, lockFile))
	require.NoError(t, err)
	marker, err := os.Stat(filepath.Join(dir, cleanFile))
	require.NoError(t, err)
	require.True(t, os.SameFile(lock, marker), "the marker is the lock file")

	flockDir = unix.Flock
	s, err = Open(dir, nil)
	require.NoError(t, err)
	require.True(t, s.clean)
	require.NoError(t, s.Close())
}
