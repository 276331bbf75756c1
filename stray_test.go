package strata_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestCreateTopicAfterAFailedDelete: a DeleteTopic that fails midway leaves
// partition directories of the topic, with their data; a topic created
// under the name later in the same Open removes them rather than take
// their data.
func TestCreateTopicAfterAFailedDelete(t *testing.T) {
	m := vfs.NewMem()
	s, err := strata.Open("/store", &strata.Options{FS: m, Sync: strata.SyncNever})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	for p := range 2 {
		_, err := s.AppendTo(ctx, "t", p, rec("k", "old"))
		require.NoError(t, err)
	}
	// The rename of t-0 to its "-delete" name fails: DeleteTopic stops
	// there, after the registry forgot the topic.
	m.SetInjector(vfs.FailOnce(vfs.OpRename, "-delete"))
	require.ErrorIs(t, s.DeleteTopic("t"), vfs.ErrInjected)
	m.SetInjector(nil)
	for _, dir := range []string{"/store/t-0", "/store/t-1"} {
		_, err := m.Stat(dir)
		require.NoError(t, err, "the failed DeleteTopic left %s", dir)
	}

	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	for p := range 2 {
		end, err := s.ListOffsets("t", p, strata.Latest)
		require.NoError(t, err)
		require.Zero(t, end, "partition %d of the new topic starts empty", p)
	}
}

// TestCreatePartitionsFailureRemovesItsDirectories: a CreatePartitions
// whose registry write fails removes the partition directories it made,
// and a later one starts them empty.
func TestCreatePartitionsFailureRemovesItsDirectories(t *testing.T) {
	m := vfs.NewMem()
	s, err := strata.Open("/store", &strata.Options{FS: m, Sync: strata.SyncNever})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	m.SetInjector(vfs.FailOnce(vfs.OpRename, "topics.json"))
	require.Error(t, s.CreatePartitions("t", 3))
	m.SetInjector(nil)
	for _, dir := range []string{"/store/t-1", "/store/t-2"} {
		_, err := m.Stat(dir)
		require.ErrorIs(t, err, os.ErrNotExist, "%s after the failed CreatePartitions", dir)
	}
	require.NoError(t, s.CreatePartitions("t", 3))
	for p := range 3 {
		_, err := s.AppendTo(ctx, "t", p, rec("k", "v"))
		require.NoError(t, err)
		end, err := s.ListOffsets("t", p, strata.Latest)
		require.NoError(t, err)
		require.Equal(t, int64(1), end, "partition %d", p)
	}
}
