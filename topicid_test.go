package strata_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// failOffsetsWrites fails every write to the internal offsets topic's log,
// as a full disk or a crash right before them would.
func failOffsetsWrites(op vfs.Op, path string) error {
	if (op == vfs.OpWrite || op == vfs.OpWriteMap) && strings.Contains(path, strata.ConsumerOffsetsTopic) {
		return vfs.ErrInjected
	}
	return nil
}

// fillAndCommit creates topic t with n records in each of its partitions
// and commits offset 15 of each for group g.
func fillAndCommit(t *testing.T, s *strata.Store, partitions int) {
	t.Helper()
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: partitions}))
	for p := range partitions {
		for i := range 20 {
			_, err := s.AppendTo(ctx, "t", p, rec("k", fmt.Sprint("old-", i)))
			require.NoError(t, err)
		}
		require.NoError(t, s.Commit("g", "t", p, 15, ""))
	}
}

// requireFreshTopic checks that topic t, created again, has no commits of
// group g and that a group consumer starts each partition at offset 0.
func requireFreshTopic(t *testing.T, s *strata.Store, partitions int) {
	t.Helper()
	for p := range partitions {
		_, ok := s.Committed("g", "t", p)
		require.False(t, ok, "partition %d of the new topic has no commit of the old one", p)
		for i := range 20 {
			_, err := s.AppendTo(ctx, "t", p, rec("k", fmt.Sprint("new-", i)))
			require.NoError(t, err)
		}
	}
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer c.Close()
	first := map[int]int64{}
	for len(first) < partitions {
		msgs, err := c.Poll(ctx)
		require.NoError(t, err)
		for _, m := range msgs {
			if _, ok := first[m.Partition]; !ok {
				first[m.Partition] = m.Offset
				require.Equal(t, "new-0", string(m.Value))
			}
		}
	}
	for p, off := range first {
		require.Zero(t, off, "partition %d starts at the beginning", p)
	}
}

// TestDeleteTopicWithoutTombstonesHandsNothingOn: the tombstones of a
// DeleteTopic do not make it to __consumer_offsets (a crash right after the
// registry was written, or a full disk); a topic created again under the
// name must not inherit the old topic's commits, whether it is created in
// the same process or after a crash and a new Open.
func TestDeleteTopicWithoutTombstonesHandsNothingOn(t *testing.T) {
	opts := &strata.Options{Sync: strata.SyncAlways, Logger: slog.New(slog.DiscardHandler)}
	t.Run("same process", func(t *testing.T) {
		m := vfs.NewMem()
		s, err := strata.Open("data", onFS(m, opts))
		require.NoError(t, err)
		defer s.Close()
		fillAndCommit(t, s, 3)
		m.SetInjector(failOffsetsWrites)
		require.NoError(t, s.DeleteTopic("t"), "the topic goes; its tombstones could not be written")
		m.SetInjector(nil)
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 3}))
		requireFreshTopic(t, s, 3)
	})
	t.Run("after a crash", func(t *testing.T) {
		m := vfs.NewMem()
		s, err := strata.Open("data", onFS(m, opts))
		require.NoError(t, err)
		fillAndCommit(t, s, 3)
		m.SetInjector(failOffsetsWrites)
		require.NoError(t, s.DeleteTopic("t"))
		after := m.Crash()
		s, err = strata.Open("data", onFS(after, opts))
		require.NoError(t, err)
		defer s.Close()
		require.NotContains(t, s.Groups(), "g", "Open drops the commits of a topic that is gone")
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 3}))
		requireFreshTopic(t, s, 3)
	})
}

// TestConsumerNoticesARecreatedTopic: a consumer reading a topic that is
// deleted and created again with the same partitions starts the new topic
// from the reset position, and its commits of positions in the old topic
// do not land in the new one.
func TestConsumerNoticesARecreatedTopic(t *testing.T) {
	s, err := strata.Open(t.TempDir(), &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	for i := range 30 {
		_, err := s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprint("old-", i)))
		require.NoError(t, err)
	}
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer c.Close()
	got := 0
	for got < 30 {
		msgs, err := c.Poll(ctx)
		require.NoError(t, err)
		got += len(msgs)
	}
	require.NoError(t, s.DeleteTopic("t"))
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	require.NoError(t, c.Commit(ctx), "a position in the deleted topic is not committed")
	_, ok := s.Committed("g", "t", 0)
	require.False(t, ok)
	_, err = s.AppendTo(ctx, "t", 0, rec("k", "new-0"))
	require.NoError(t, err)
	msgs, err := c.Poll(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Equal(t, int64(0), msgs[0].Offset, "the new topic is read from its start")
	require.Equal(t, "new-0", string(msgs[0].Value))
}

// TestCommitAfterStoreCloseIsErrClosed: a consumer whose store closed
// commits nothing and says so.
func TestCommitAfterStoreCloseIsErrClosed(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	_, err = s.AppendTo(ctx, "t", 0, rec("k", "v"))
	require.NoError(t, err)
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	msgs, err := c.Poll(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.NoError(t, s.Close())
	err = c.Commit(ctx)
	require.ErrorIs(t, err, strata.ErrClosed)
	require.True(t, errors.Is(c.Close(), strata.ErrClosed) || c.Close() == nil)
}

// TestTopicIDs: every topic has an id, kept across Open, recorded in each
// partition directory as Kafka does, and new for a topic created again.
func TestTopicIDs(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	d, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.False(t, d.ID.IsZero())
	require.Len(t, d.ID.String(), 22)
	require.NoError(t, s.Close())
	for p := range 2 {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("t-%d", p), "partition.metadata"))
		require.NoError(t, err)
		require.Equal(t, "version: 0\ntopic_id: "+d.ID.String(), string(b))
	}
	s, err = strata.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	again, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.Equal(t, d.ID, again.ID, "the id survives Open")
	require.NoError(t, s.DeleteTopic("t"))
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	fresh, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.NotEqual(t, d.ID, fresh.ID, "a topic created again is another topic")
}
