package strata_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// loadKey loads key's records in partition 0 of e as a ReadCommitted
// aggregate does: their values and the offset of the last one.
func loadKey(t *testing.T, s *strata.Store, key string) ([]string, int64) {
	t.Helper()
	last := strata.NoOffset
	var vals []string
	for r, err := range s.Scan("e", 0, 0) {
		require.NoError(t, err)
		if string(r.Key) == key {
			vals = append(vals, string(r.Value))
			last = r.Offset
		}
	}
	return vals, last
}

// TestAppendIfLastWaitsForOpenTxn: a conditional append whose key's last
// record lies behind a transaction still open is refused with
// ErrPendingTransaction, not ErrWrongOffset, since a ReadCommitted load
// cannot see that record; retried once the transaction ended, it sees it:
// no lost update. A record of an aborted transaction as the key's last is
// a mismatch's Actual, and a retry with it is taken.
func TestAppendIfLastWaitsForOpenTxn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writer func(t *testing.T, s *strata.Store) // makes a record of acct lie behind the open transaction
		after  int                                 // acct's records once the transaction committed
	}{
		{"the transaction's record", func(t *testing.T, s *strata.Store) {}, 6},
		{"a record after its first", func(t *testing.T, s *strata.Store) {
			_, err := s.AppendIfLast(ctx, "e", []byte("acct"), 0, rec("acct", "withdraw 30 (A)"))
			require.NoError(t, err, "its last record (0) lies before the transaction")
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stratatest.Open(t, &strata.Options{Isolation: strata.ReadCommitted})
			require.NoError(t, s.CreateTopic("e", strata.TopicConfig{Partitions: 1, MaxBatchBytes: 200}))
			_, err := s.AppendIfLast(ctx, "e", []byte("acct"), strata.NoOffset, rec("acct", "deposit 70"))
			require.NoError(t, err)
			tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "w1"})
			require.NoError(t, err)
			key := "acct"
			if tc.name != "the transaction's record" {
				key = "other"
			}
			for range 5 { // written early: a batch's worth
				require.NoError(t, tx.AppendTo(ctx, "e", 0, rec(key, "withdraw 70 (txn) "+strings.Repeat(".", 40))))
			}
			tc.writer(t, s)
			loaded, last := loadKey(t, s, "acct")
			require.Equal(t, []string{"deposit 70"}, loaded, "the open transaction holds back what follows")
			_, err = s.AppendIfLast(ctx, "e", []byte("acct"), last, rec("acct", "withdraw 70 (B)"))
			require.ErrorIs(t, err, strata.ErrPendingTransaction)
			require.False(t, errors.Is(err, strata.ErrWrongOffset), "no Actual to retry with: %v", err)
			require.NoError(t, tx.Commit(ctx))
			loaded, last = loadKey(t, s, "acct")
			require.Len(t, loaded, tc.after, "reloaded after the transaction: %v", loaded)
			_, err = s.AppendIfLast(ctx, "e", []byte("acct"), last, rec("acct", "withdraw 70 (B)"))
			require.NoError(t, err, "decided on everything before it")
		})
	}

	t.Run("aborted", func(t *testing.T) {
		s := stratatest.Open(t, &strata.Options{Isolation: strata.ReadCommitted})
		require.NoError(t, s.CreateTopic("e", strata.TopicConfig{Partitions: 1, MaxBatchBytes: 200}))
		off, err := s.AppendIfLast(ctx, "e", []byte("acct"), strata.NoOffset, rec("acct", "deposit 70"))
		require.NoError(t, err)
		tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "w1"})
		require.NoError(t, err)
		for range 5 {
			require.NoError(t, tx.AppendTo(ctx, "e", 0, rec("acct", "withdraw 70 (txn) "+strings.Repeat(".", 40))))
		}
		require.NoError(t, tx.Abort(ctx))
		_, err = s.AppendIfLast(ctx, "e", []byte("acct"), off, rec("acct", "withdraw 70 (B)"))
		var we *strata.WrongOffsetError
		require.ErrorAs(t, err, &we, "the aborted record is the key's last")
		_, err = s.AppendIfLast(ctx, "e", []byte("acct"), we.Actual, rec("acct", "withdraw 70 (B)"))
		require.NoError(t, err)
		loaded, _ := loadKey(t, s, "acct")
		require.Equal(t, []string{"deposit 70", "withdraw 70 (B)"}, loaded)
	})
}
