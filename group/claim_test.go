package group_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/group"
)

// TestClaim checks that a claimed group takes no member and keeps its
// offsets as a whole, that commits and partial deletes are still served,
// that claims nest, and that a group with members cannot be claimed.
func TestClaim(t *testing.T) {
	c := group.NewCoordinator(nil, nil)
	tp := group.TopicPartition{Topic: "t", Partition: 0}
	release, err := c.Claim("g")
	require.NoError(t, err)
	require.True(t, c.Claimed("g"))
	require.Equal(t, []string{"g"}, c.Groups(), "a claimed group is listed")
	_, err = c.Join("g", []string{"t"})
	require.ErrorIs(t, err, group.ErrGroupClaimed)
	require.NoError(t, c.Commit("g", group.MemberRef{}, map[group.TopicPartition]group.OffsetAndMetadata{tp: {Offset: 1}}))
	require.ErrorIs(t, c.DeleteOffsets("g"), group.ErrGroupClaimed)
	require.NoError(t, c.DeleteOffsets("g", tp))
	_, ok := c.Committed("g", "t", 0)
	require.False(t, ok)

	again, err := c.Claim("g")
	require.NoError(t, err)
	release()
	release()
	require.True(t, c.Claimed("g"), "the second claim holds")
	again()
	require.False(t, c.Claimed("g"))
	ref, err := c.Join("g", []string{"t"})
	require.NoError(t, err)
	_, err = c.Claim("g")
	require.ErrorIs(t, err, group.ErrGroupActive)
	require.NoError(t, c.Leave("g", ref.MemberID))
	_, err = c.Claim("")
	require.ErrorIs(t, err, group.ErrInvalidGroup)
}
