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
// directory, CreateTopic, Append one record, Close) leaves five inodes —
// the directory, topics.json, the partition's directory, its .log and
// partition.metadata — because the lock is taken on the directory itself
// and the clean-shutdown marker is a second name of topics.json. Each
// inode costs an allocation that ext4 makes slow after many deletions;
// the next Open still sees the clean shutdown. A store without topics
// has no topics.json: its marker is a file of its own.
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
			require.Len(t, got, 5, "inodes: %v", got)
			_, err = os.Stat(filepath.Join(dir, ".lock"))
			require.ErrorIs(t, err, os.ErrNotExist, "no lock file")
			registry, err := os.Stat(filepath.Join(dir, "topics.json"))
			require.NoError(t, err)
			marker, err := os.Stat(filepath.Join(dir, ".clean-shutdown"))
			require.NoError(t, err)
			require.True(t, os.SameFile(registry, marker), "the marker is topics.json")

			s, err = strata.Open(dir, &strata.Options{Sync: policy})
			require.NoError(t, err)
			require.True(t, strata.OpenedClean(s))
			_, err = os.Stat(filepath.Join(dir, ".clean-shutdown"))
			require.ErrorIs(t, err, os.ErrNotExist, "Open removes the marker")
			registry2, err := os.Stat(filepath.Join(dir, "topics.json"))
			require.NoError(t, err, "and keeps topics.json")
			require.Equal(t, registry.Size(), registry2.Size())
			recs, err := s.Read(ctx, "t", 0, 0, 10)
			require.NoError(t, err)
			require.Len(t, recs, 1)
			require.NoError(t, s.Close())
			require.Len(t, inodes(t, dir), 5)

			empty := filepath.Join(t.TempDir(), "empty")
			s, err = strata.Open(empty, &strata.Options{Sync: policy})
			require.NoError(t, err)
			require.NoError(t, s.Close())
			require.Len(t, inodes(t, empty), 2, "the directory and its marker")
			s, err = strata.Open(empty, &strata.Options{Sync: policy})
			require.NoError(t, err)
			require.True(t, strata.OpenedClean(s))
			require.NoError(t, s.Close())
		})
	}
}
