package strata_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestTxnCloseEndsTransactions: Close aborts a transaction still open,
// durably (its early batch gets its ABORT marker), and the calls of the
// transaction return ErrClosed; the next clean Open then leaves the ids'
// states unread until BeginTxn, which continues the id's epochs as if
// they had been read at Open.
func TestTxnCloseEndsTransactions(t *testing.T) {
	m := vfs.NewMem()
	s := openTxnStore(t, m, strata.SyncEvery(time.Hour))
	done, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, done.AppendTo(ctx, "a", 1, vals("committed", 2)...))
	require.NoError(t, done.Commit(ctx))
	open, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	pid, epoch := strata.TxnProducerOf(open)
	big := make([]strata.Record, 600)
	for i := range big {
		big[i].Value = []byte(strings.Repeat("v", 2000))
	}
	require.NoError(t, open.AppendTo(ctx, "a", 0, big...)) // written early, in part
	require.NoError(t, s.Close())
	require.ErrorIs(t, open.Commit(ctx), strata.ErrClosed)

	m = m.Crash() // what Close wrote is durable: nothing is lost
	s = openTxnStore(t, m, strata.SyncEvery(time.Hour))
	require.False(t, strata.TxnStatesRead(s), "a clean Open has no transaction to finish")
	p, err := strata.PartitionOf(s, "a", 0)
	require.NoError(t, err)
	require.Equal(t, p.EndOffset(), p.LastStableOffset(), "Close aborted it")
	v := viewTxns(t, s, "a", 0)
	require.Empty(t, v.open)
	require.NotEmpty(t, v.aborted)
	require.Equal(t, strs("committed", 2), readCommitted(t, s, "a", 1))

	next, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.True(t, strata.TxnStatesRead(s))
	npid, nepoch := strata.TxnProducerOf(next)
	require.Equal(t, pid, npid, "the id's producer id, read from its state")
	require.Greater(t, nepoch, epoch, "past the epoch Close aborted at")
	require.NoError(t, next.AppendTo(ctx, "a", 0, vals("next", 1)...))
	require.NoError(t, next.Commit(ctx))
	require.Equal(t, strs("next", 1), readCommitted(t, s, "a", 0))
}
