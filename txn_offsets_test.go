package strata_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestTxnCommitOffsets commits a group's offsets in transactions: they are
// the group's once the transaction commits (not before), never when it
// aborts, and bad offsets are refused at the call, changing nothing.
func TestTxnCommitOffsets(t *testing.T) {
	m := vfs.NewMem()
	s := openTxnStore(t, m, strata.SyncAlways)
	_, err := s.AppendTo(ctx, "b", 0, vals("in", 5)...)
	require.NoError(t, err)
	in := strata.TopicPartition{Topic: "b", Partition: 0}

	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.ErrorIs(t, tx.CommitOffsets(ctx, "g", map[strata.TopicPartition]int64{in: 6}), strata.ErrOffsetOutOfRange)
	require.ErrorIs(t, tx.CommitOffsets(ctx, "", map[strata.TopicPartition]int64{in: 1}), strata.ErrInvalidGroup)
	require.ErrorIs(t, tx.CommitOffsets(ctx, "g", map[strata.TopicPartition]int64{{Topic: "nope"}: 1}), strata.ErrUnknownTopic)
	require.NoError(t, tx.CommitOffsets(ctx, "g", map[strata.TopicPartition]int64{in: 2}))
	require.NoError(t, tx.CommitOffsets(ctx, "g", map[strata.TopicPartition]int64{in: 3}), "a later call replaces the offset")
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("out", 3)...))
	_, ok := s.Committed("g", "b", 0)
	require.False(t, ok, "not before Commit")
	require.NoError(t, tx.Commit(ctx))
	om, ok := s.Committed("g", "b", 0)
	require.True(t, ok)
	require.Equal(t, int64(3), om.Offset)

	tx, err = s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, tx.CommitOffsets(ctx, "g", map[strata.TopicPartition]int64{in: 5}))
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("gone", 1)...))
	require.NoError(t, tx.Abort(ctx))
	om, _ = s.Committed("g", "b", 0)
	require.Equal(t, int64(3), om.Offset, "an aborted transaction's offsets are not committed")

	// Offsets alone are a transaction too.
	tx, err = s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, tx.CommitOffsets(ctx, "g", map[strata.TopicPartition]int64{in: 4}))
	require.NoError(t, tx.Commit(ctx))
	om, _ = s.Committed("g", "b", 0)
	require.Equal(t, int64(4), om.Offset)

	require.NoError(t, s.Close())
	s = openTxnStore(t, m, strata.SyncAlways)
	om, _ = s.Committed("g", "b", 0)
	require.Equal(t, int64(4), om.Offset, "after a reopen")
	require.Equal(t, strs("out", 3), readCommitted(t, s, "a", 0))
}

// TestTxnCommitOffsetsTopicRecreated adds an offset to a transaction, then
// deletes its topic and creates another of the name before the commit:
// the offset was the deleted topic's, so the commit fails with
// ErrUnknownTopic and aborts, and the new topic's group has no committed
// offset from it.
func TestTxnCommitOffsetsTopicRecreated(t *testing.T) {
	s := openTxnStore(t, vfs.NewMem(), strata.SyncNever)
	_, err := s.AppendTo(ctx, "b", 0, vals("old", 5)...)
	require.NoError(t, err)
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, tx.CommitOffsets(ctx, "g", map[strata.TopicPartition]int64{{Topic: "b", Partition: 0}: 3}))
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("out", 1)...))

	require.NoError(t, s.DeleteTopic("b"))
	require.NoError(t, s.CreateTopic("b", strata.TopicConfig{Partitions: 1}))
	_, err = s.AppendTo(ctx, "b", 0, vals("new", 5)...)
	require.NoError(t, err)
	require.ErrorIs(t, tx.Commit(ctx), strata.ErrUnknownTopic)
	_, ok := s.Committed("g", "b", 0)
	require.False(t, ok, "the offset was the deleted topic's")
	require.Empty(t, readCommitted(t, s, "a", 0))
	require.False(t, s.PendingTxnOffset("g", "b", 0), "nothing left pending")
}
