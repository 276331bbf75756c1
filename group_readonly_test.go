package strata_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// TestDescribeGroupReadOnly: a read-only store describes the groups of the
// store that owns the directory as that one records them, and follows
// what it appends after the open — commits, new members, members that
// left — at each call, without reopening.
func TestDescribeGroupReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := strata.Open(dir, nil)
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	appendN(t, w, "t", 0, 10)
	a, err := w.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer a.Close()
	_, err = a.Poll(ctx)
	require.NoError(t, err)

	r, err := strata.Open(dir, roOpts())
	require.NoError(t, err)
	defer r.Close()
	d, err := r.DescribeGroup(ctx, "g")
	require.NoError(t, err)
	require.Equal(t, strata.GroupStable, d.State)
	require.Len(t, d.Members, 1)
	require.Equal(t, 1, d.Generation)
	for _, gp := range d.Partitions {
		require.Equal(t, int64(-1), gp.Committed, "nothing committed yet")
	}

	// The owner commits, a second consumer joins: the reader sees both.
	require.NoError(t, a.Commit(ctx))
	b, err := w.Consumer("g", []string{"t"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	d, err = r.DescribeGroup(ctx, "g")
	require.NoError(t, err)
	require.Equal(t, 2, d.Generation)
	require.Len(t, d.Members, 2)
	var committed int64
	for _, gp := range d.Partitions {
		committed += max(gp.Committed, 0)
	}
	require.Equal(t, int64(10), committed, "a's commit of everything it polled")
	c, ok := r.Committed("g", "t", 0)
	require.True(t, ok)
	require.Positive(t, c.Offset)

	// A group the owner creates after the open is listed; the members
	// that leave are gone from the description.
	require.NoError(t, w.Commit("audit", "t", 0, 3, ""))
	require.NoError(t, b.Close())
	require.NoError(t, a.Close())
	l, err := r.ListGroups()
	require.NoError(t, err)
	require.Equal(t, []strata.GroupListing{
		{Group: "audit", State: strata.GroupEmpty},
		{Group: "g", State: strata.GroupEmpty, ProtocolType: "consumer"},
	}, l)
	d, err = r.DescribeGroup(ctx, "g")
	require.NoError(t, err)
	require.Equal(t, 4, d.Generation)
	require.Empty(t, d.Members)
	require.Equal(t, []string{"audit", "g"}, r.Groups())
}

// TestDescribeGroupReadOnlyDamage: damage in a sealed segment of
// __consumer_offsets is ErrCorrupt from DescribeGroup and ListGroups of a
// read-only store, which does not describe groups from what came before
// it; the directory is left as it is.
func TestDescribeGroupReadOnlyDamage(t *testing.T) {
	defer strata.SetOffsetsSegmentBytes(4096)()
	ctx := context.Background()
	dir := t.TempDir()
	w, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, w.CreateTopic("t", strata.TopicConfig{}))
	appendN(t, w, "t", 0, 10)
	for i := range 100 {
		require.NoError(t, w.Commit("g", "t", 0, int64(i%10), "metadata to fill the segments"))
	}
	require.NoError(t, w.Close())
	flipInBatch(t, filepath.Join(dir, strata.ConsumerOffsetsTopic+"-0", "00000000000000000000.log"), 3)
	before := dirImage(t, dir)

	r, err := strata.Open(dir, roOpts())
	require.NoError(t, err)
	defer r.Close()
	_, err = r.DescribeGroup(ctx, "g")
	require.ErrorIs(t, err, strata.ErrCorrupt)
	require.Contains(t, err.Error(), "00000000000000000000.log")
	_, err = r.ListGroups()
	require.ErrorIs(t, err, strata.ErrCorrupt)
	require.NoError(t, r.Close())
	sameImage(t, before, dirImage(t, dir))
}
