package strata_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestTxnTopicDeletedMidway: a transaction that wrote to a topic deleted
// while it was open fails to commit with ErrUnknownTopic, and is aborted:
// nothing of it is visible, before or after a reopen, also once a topic of
// the name is created again.
func TestTxnTopicDeletedMidway(t *testing.T) {
	for _, recreate := range []bool{false, true} {
		t.Run(map[bool]string{false: "deleted", true: "recreated"}[recreate], func(t *testing.T) {
			m := vfs.NewMem()
			s := openTxnStore(t, m, strata.SyncNever)
			require.NoError(t, s.CreateTopic("d", strata.TopicConfig{Partitions: 1, MaxBatchBytes: 200}))
			tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "d"})
			require.NoError(t, err)
			for range 10 { // written early, a batch at a time
				require.NoError(t, tx.AppendTo(ctx, "d", 0, rec("k", strings.Repeat("x", 50))))
			}
			require.NoError(t, tx.AppendTo(ctx, "b", 0, vals("held", 1)...))
			require.NoError(t, s.DeleteTopic("d"))
			if recreate {
				require.NoError(t, s.CreateTopic("d", strata.TopicConfig{Partitions: 1}))
			}
			err = tx.Commit(ctx)
			require.ErrorIs(t, err, strata.ErrUnknownTopic)
			require.NotErrorIs(t, err, strata.ErrClosed, "the store is open")
			require.Empty(t, readCommitted(t, s, "b", 0))
			require.NoError(t, s.Close())
			s = openTxnStore(t, m, strata.SyncNever)
			require.Empty(t, readCommitted(t, s, "b", 0))
		})
	}
}
