//go:build unix

package strata_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/stratalog/strata"
)

// lockChildEnv names the store directory of TestLockAcrossProcessesChild,
// and what it does there ("open" or "closed", after a colon).
const lockChildEnv = "STRATA_LOCK_CHILD"

// TestLockAcrossProcesses: while a child process holds a store, an Open
// in this one fails with ErrLocked; once the child is killed (kill -9) the
// lock is gone with it. Killed with the store open, the next Open
// recovers (not clean); killed after the store's Close wrote the marker
// but with the directory still locked (as between the marker and the
// unlock), it opens clean.
func TestLockAcrossProcesses(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		clean bool
	}{{"open", false}, {"closed", true}} {
		t.Run(tc.mode, func(t *testing.T) {
			dir := t.TempDir()
			cmd, lines := startChild(t, "TestLockAcrossProcessesChild", lockChildEnv+"="+tc.mode+":"+dir)
			require.Equal(t, "held", <-lines)
			_, err := strata.Open(dir, nil)
			require.ErrorIs(t, err, strata.ErrLocked)
			require.NoError(t, cmd.Process.Kill())
			_ = cmd.Wait()

			s, err := strata.Open(dir, &strata.Options{Logger: logOnFailure(t)})
			require.NoError(t, err, "the lock went with the killed process")
			require.Equal(t, tc.clean, strata.OpenedClean(s))
			recs, err := s.Read(ctx, "t", 0, 0, 10)
			require.NoError(t, err)
			require.Len(t, recs, 1)
			require.NoError(t, s.Close())
		})
	}
}

// TestLockAcrossProcessesChild is TestLockAcrossProcesses' child: it
// opens the store, appends a record and, in mode "closed", closes it and
// locks the directory itself; it prints "held" and waits to be killed.
func TestLockAcrossProcessesChild(t *testing.T) {
	mode, dir, ok := cutEnv(os.Getenv(lockChildEnv))
	if !ok {
		t.Skip("run by TestLockAcrossProcesses")
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fail(err)
	}
	if err := s.CreateTopic("t", strata.TopicConfig{}); err != nil {
		fail(err)
	}
	if _, err := s.Append(ctx, "t", rec("k", "v")); err != nil {
		fail(err)
	}
	if mode == "closed" {
		if err := s.Close(); err != nil {
			fail(err)
		}
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err == nil {
			err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		}
		if err != nil {
			fail(err)
		}
	}
	fmt.Println("held")
	select {}
}

// cutEnv splits "mode:dir".
func cutEnv(v string) (mode, dir string, ok bool) {
	for i := range len(v) {
		if v[i] == ':' {
			return v[:i], v[i+1:], i > 0 && i < len(v)-1
		}
	}
	return "", "", false
}

// TestLockFileOfAnOlderStore: a directory with a .lock file (one an older
// Strata, which locks only that file, has opened, or Kafka's) has that
// file locked too, so each version excludes the other: an Open fails with
// ErrLocked, naming the file, while another process holds the file, and
// an open store holds it against them. The marker is then a second name
// of .lock, which stays.
func TestLockFileOfAnOlderStore(t *testing.T) {
	dir := t.TempDir()
	lockPath := filepath.Join(dir, ".lock")
	require.NoError(t, os.WriteFile(lockPath, nil, 0o644))
	older, err := os.OpenFile(lockPath, os.O_RDWR, 0)
	require.NoError(t, err)
	defer older.Close()
	require.NoError(t, unix.Flock(int(older.Fd()), unix.LOCK_EX|unix.LOCK_NB))

	_, err = strata.Open(dir, nil)
	require.ErrorIs(t, err, strata.ErrLocked)
	require.ErrorContains(t, err, lockPath)
	require.NoError(t, unix.Flock(int(older.Fd()), unix.LOCK_UN))

	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.ErrorIs(t, unix.Flock(int(older.Fd()), unix.LOCK_EX|unix.LOCK_NB), unix.EWOULDBLOCK, "the store holds .lock")
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	require.NoError(t, s.Close())
	require.NoError(t, unix.Flock(int(older.Fd()), unix.LOCK_EX|unix.LOCK_NB), "Close releases it")
	require.NoError(t, unix.Flock(int(older.Fd()), unix.LOCK_UN))

	lock, err := os.Stat(lockPath)
	require.NoError(t, err)
	marker, err := os.Stat(filepath.Join(dir, ".clean-shutdown"))
	require.NoError(t, err)
	require.True(t, os.SameFile(lock, marker), "the marker is the lock file")
	s, err = strata.Open(dir, nil)
	require.NoError(t, err)
	require.True(t, strata.OpenedClean(s))
	require.NoError(t, s.Close())
}
