package strata_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// TestEnsureOffsetsTopic checks that EnsureOffsetsTopic creates the
// offsets topic with its own config, that calling it again or after a
// commit changes nothing, and that a store reopened on it has the topic
// and its commits.
func TestEnsureOffsetsTopic(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{}))
	_, err = s.DescribeTopic(strata.ConsumerOffsetsTopic)
	require.ErrorIs(t, err, strata.ErrUnknownTopic)

	require.NoError(t, s.EnsureOffsetsTopic())
	d, err := s.DescribeTopic(strata.ConsumerOffsetsTopic)
	require.NoError(t, err)
	require.Len(t, d.Partitions, 1)
	require.Equal(t, strata.CleanupCompact, d.Config.CleanupPolicy)
	require.Equal(t, int64(0), d.Partitions[0].EndOffset)
	require.NoError(t, s.EnsureOffsetsTopic(), "again")
	require.Equal(t, []string{"orders"}, s.Topics(), "internal, not listed")

	require.NoError(t, s.Commit("g", "orders", 0, 0, "m"))
	require.NoError(t, s.EnsureOffsetsTopic(), "after a commit")
	d2, err := s.DescribeTopic(strata.ConsumerOffsetsTopic)
	require.NoError(t, err)
	require.Equal(t, d.ID, d2.ID, "the same topic")
	require.NoError(t, s.Close())

	s, err = strata.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	got, ok := s.Committed("g", "orders", 0)
	require.True(t, ok)
	require.Equal(t, "m", got.Metadata)
	require.NoError(t, s.EnsureOffsetsTopic())
}
