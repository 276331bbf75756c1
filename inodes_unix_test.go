//go:build unix

package strata_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// inodes returns the inodes under dir (dir's own included), each with the
// names it has there.
func inodes(t *testing.T, dir string) map[uint64][]string {
	t.Helper()
	out := map[uint64][]string{}
	err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		ino := fi.Sys().(*syscall.Stat_t).Ino
		out[ino] = append(out[ino], rel)
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestColdCycleInodes: a store's cycle on real files (Open in a new
// directory, CreateTopic, Append one record, Close) leaves six inodes —
// the directory, its lock, topics.json, the partition's directory, its
// .log and partition.metadata — because the clean-shutdown marker is a
// second name of the lock file. Each inode costs an allocation that ext4
// makes slow after many deletions; the next Open still sees the clean
// shutdown.
func TestColdCycleInodes(t *testing.T) {
	for _, policy := range []strata.SyncPolicy{strata.SyncNever, strata.SyncAlways} {
		t.Run(policy.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			s, err := strata.Open(dir, &strata.Options{Sync: policy})
			require.NoError(t, err)
			require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
			_, err = s.Append(ctx, "t", rec("k", "v"))
			require.NoError(t, err)
			require.NoError(t, s.Close())

			got := inodes(t, dir)
			require.Len(t, got, 6, "inodes: %v", got)
			lock, err := os.Stat(filepath.Join(dir, ".lock"))
			require.NoError(t, err)
			marker, err := os.Stat(filepath.Join(dir, ".clean-shutdown"))
			require.NoError(t, err)
			require.True(t, os.SameFile(lock, marker), "the marker is the lock file")
			require.Zero(t, marker.Size())

			s, err = strata.Open(dir, &strata.Options{Sync: policy})
			require.NoError(t, err)
			_, err = os.Stat(filepath.Join(dir, ".clean-shutdown"))
			require.ErrorIs(t, err, os.ErrNotExist, "Open removes the marker")
			_, err = os.Stat(filepath.Join(dir, ".lock"))
			require.NoError(t, err, "and keeps the lock file")
			recs, err := s.Read(ctx, "t", 0, 0, 10)
			require.NoError(t, err)
			require.Len(t, recs, 1)
			require.NoError(t, s.Close())
			require.Len(t, inodes(t, dir), 6)
		})
	}
}
