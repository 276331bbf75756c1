package strata_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestTxnEndedContext: BeginTxn with a context that has ended refuses,
// for a new id as for a known one, and Commit and Abort with one leave
// the transaction open, to be ended again.
func TestTxnEndedContext(t *testing.T) {
	s := openTxnStore(t, vfs.NewMem(), strata.SyncNever)
	done, cancel := context.WithCancel(ctx)
	cancel()
	for _, id := range []string{"new", "new-too"} {
		tx, err := s.BeginTxn(done, strata.TxnOptions{ID: id})
		require.ErrorIs(t, err, context.Canceled, "id %q", id)
		require.Nil(t, tx)
	}
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "new"})
	require.NoError(t, err, "the refused BeginTxn changed nothing")
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("held", 1)...))
	require.ErrorIs(t, tx.Commit(done), context.Canceled)
	require.Empty(t, readCommitted(t, s, "a", 0))
	require.ErrorIs(t, tx.Abort(done), context.Canceled)
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("more", 1)...), "still open")
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, []string{"held0", "more0"}, readCommitted(t, s, "a", 0))
}
