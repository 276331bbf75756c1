package group_test

import (
	"fmt"
	"sync"
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

// TestClaimForgets: the release of a claim on a group that holds nothing
// forgets it, so that claims of many names hold no memory once released;
// a group with offsets, or that had members, is kept.
func TestClaimForgets(t *testing.T) {
	c := group.NewCoordinator(nil, nil)
	for i := range 1000 {
		release, err := c.Claim(fmt.Sprintf("g%d", i))
		require.NoError(t, err)
		release()
	}
	require.Zero(t, group.States(c), "nothing held")

	release, err := c.Claim("kept")
	require.NoError(t, err)
	require.NoError(t, c.Commit("kept", group.MemberRef{}, map[group.TopicPartition]group.OffsetAndMetadata{{Topic: "t"}: {Offset: 1}}))
	release()
	require.Equal(t, 1, group.States(c))
	om, ok := c.Committed("kept", "t", 0)
	require.True(t, ok)
	require.Equal(t, int64(1), om.Offset)

	// Claims racing joins and commits of the same name: every join of a
	// free group succeeds, nothing is lost.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				name := fmt.Sprintf("race%d", j%4)
				if i%2 == 0 {
					if release, err := c.Claim(name); err == nil {
						release()
					}
					continue
				}
				require.NoError(t, c.Commit(name, group.MemberRef{}, map[group.TopicPartition]group.OffsetAndMetadata{{Topic: "t", Partition: i}: {Offset: int64(j)}}))
			}
		}()
	}
	wg.Wait()
	for j := range 4 {
		for i := 1; i < 8; i += 2 {
			_, ok := c.Committed(fmt.Sprintf("race%d", j), "t", i)
			require.True(t, ok, "race%d partition %d", j, i)
		}
	}
}
