package strata_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestCreateTopicFailureLeavesNothing: a CreateTopic that fails partway
// (here: the k-th file creation) removes the partition directories it made
// and leaves the registry as it was, for every k.
func TestCreateTopicFailureLeavesNothing(t *testing.T) {
	opts := &strata.Options{Sync: strata.SyncNever, Logger: slog.New(slog.DiscardHandler)}
	small4 := strata.TopicConfig{Partitions: 4, SegmentBytes: 64 << 10, MaxIndexBytes: 4 << 10}
	m := vfs.NewMem()
	s, err := strata.Open("data", onFS(m, opts))
	require.NoError(t, err)
	before := m.Count(vfs.OpCreate)
	require.NoError(t, s.CreateTopic("probe", small4))
	creates := m.Count(vfs.OpCreate) - before
	require.NoError(t, s.Close())
	require.Positive(t, creates)

	for k := range creates {
		m := vfs.NewMem()
		s, err := strata.Open("data", onFS(m, opts))
		require.NoError(t, err)
		m.SetInjector(vfs.FailAfter(k, vfs.OpCreate))
		require.Error(t, s.CreateTopic("t", small4), "k=%d", k)
		m.SetInjector(nil)
		names, err := m.ReadDir("data")
		require.NoError(t, err)
		for _, name := range names {
			require.False(t, strings.HasPrefix(name, "t-"), "k=%d: %s left behind", k, name)
		}
		require.Empty(t, s.Topics(), "k=%d", k)
		require.NoError(t, s.CreateTopic("t", small4), "k=%d: the name is free", k)
		require.NoError(t, s.Close())
		s, err = strata.Open("data", onFS(m, opts))
		require.NoError(t, err, "k=%d", k)
		require.Equal(t, []string{"t"}, s.Topics())
		require.NoError(t, s.Close())
	}
}
