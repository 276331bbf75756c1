package strata_test

import (
	"bytes"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// TestTxnEpochAfterCrashLostItsRecords crashes the machine after a
// transaction whose batches and markers are durable (under SyncAlways, as
// they are appended) but whose state records are not: a commit in one
// phase fsyncs none of them, nor does an abort, whose batch was written
// early (it filled MaxBatchBytes). The id's next transaction must take an
// epoch newer than the one the partition holds: at the same epoch, its
// batch would be refused as out of order, or taken for a retry of the
// last one and dropped.
func TestTxnEpochAfterCrashLostItsRecords(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 600)
	for _, tc := range []struct {
		name string
		end  func(tx *strata.Txn) error
		want []string // what a ReadCommitted reader reads of "e" at the end
	}{
		{"commit-one-phase", func(tx *strata.Txn) error { return tx.Commit(ctx) }, []string{"a0", "c0", "lost0"}},
		{"abort-written-early", func(tx *strata.Txn) error {
			if err := tx.AppendTo(ctx, "e", 0, strata.Record{Value: big}); err != nil {
				return err
			}
			return tx.Abort(ctx)
		}, []string{"a0", "c0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := vfs.NewMem()
				s := openTxnStore(t, m, strata.SyncAlways)
				require.NoError(t, s.CreateTopic("e", strata.TopicConfig{MaxBatchBytes: 1024}))
				// A transaction whose state records are durable (Close).
				tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
				require.NoError(t, err)
				require.NoError(t, tx.AppendTo(ctx, "e", 0, vals("a", 1)...))
				require.NoError(t, tx.AppendTo(ctx, "b", 0, vals("b", 1)...))
				require.NoError(t, tx.Commit(ctx))
				require.NoError(t, s.Close())
				m = m.Crash()
				s = openTxnStore(t, m, strata.SyncAlways)

				tx, err = s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
				require.NoError(t, err)
				lost := vals("lost", 1)
				lost[0].Value = append(lost[0].Value, big[:500]...)
				require.NoError(t, tx.AppendTo(ctx, "e", 0, lost...))
				require.NoError(t, tc.end(tx))
				after := m.Crash() // before the background fsync of the state records
				_ = s.Close()

				s = openTxnStore(t, after, strata.SyncAlways)
				tx, err = s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
				require.NoError(t, err)
				require.NoError(t, tx.AppendTo(ctx, "e", 0, vals("c", 1)...))
				require.NoError(t, tx.Commit(ctx))
				got := readCommitted(t, s, "e", 0)
				for i := range got {
					got[i] = got[i][:min(len(got[i]), 5)]
				}
				require.Equal(t, tc.want, got)
			})
		})
	}
}
