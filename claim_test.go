package strata_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// TestClaimGroup checks what a claim on a group (the broker's, for its
// wire members) refuses in the store: consumers, resets and deleting the
// offsets as a whole; and what it still serves: commits and deleting
// some partitions' offsets.
func TestClaimGroup(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	release, err := s.ClaimGroup("g")
	require.NoError(t, err)
	_, err = s.Consumer("g", []string{"t"}, strata.ConsumerOptions{})
	require.ErrorIs(t, err, strata.ErrGroupClaimed)
	require.NoError(t, s.Commit("g", "t", 0, 0, "wire"))
	require.NoError(t, s.Commit("g", "t", 1, 0, "wire"))
	_, err = s.ResetOffsets("g", "t", strata.ToEarliest, true)
	require.ErrorIs(t, err, strata.ErrGroupClaimed)
	require.ErrorIs(t, s.DeleteGroupOffsets("g"), strata.ErrGroupClaimed)
	require.NoError(t, s.DeletePartitionOffsets("g", []strata.TopicPartition{{Topic: "t", Partition: 1}}))
	_, ok := s.Committed("g", "t", 1)
	require.False(t, ok)
	release()
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	_, err = s.ClaimGroup("g")
	require.ErrorIs(t, err, strata.ErrGroupActive)
	require.ErrorIs(t, s.DeletePartitionOffsets("g", []strata.TopicPartition{{Topic: "t"}}), strata.ErrGroupActive)
	require.NoError(t, c.Close())
	require.NoError(t, s.DeleteGroupOffsets("g"))
}
