package strata_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// BenchmarkOpenAfterTxns measures a clean Open of a store (4 partitions,
// on real files) after txns transactions of one record each, by ids
// transactional ids, beside the same store after as many plain appends
// (txns=0).
func BenchmarkOpenAfterTxns(b *testing.B) {
	for _, tc := range []struct{ txns, ids int }{{0, 0}, {20000, 1}, {20000, 20000}} {
		b.Run(fmt.Sprintf("txns=%d/ids=%d", tc.txns, tc.ids), func(b *testing.B) {
			dir := b.TempDir()
			opts := &strata.Options{Sync: strata.SyncNever, CleanerInterval: -1, RetentionCheckInterval: -1}
			s, err := strata.Open(dir, opts)
			require.NoError(b, err)
			require.NoError(b, s.CreateTopic("t", strata.TopicConfig{Partitions: 4}))
			for i := range 20000 {
				if tc.txns == 0 {
					_, err := s.AppendTo(ctx, "t", i%4, rec("k", "v"))
					require.NoError(b, err)
					continue
				}
				tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: fmt.Sprint("id-", i%tc.ids)})
				require.NoError(b, err)
				require.NoError(b, tx.AppendTo(ctx, "t", i%4, rec("k", "v")))
				require.NoError(b, tx.Commit(ctx))
			}
			require.NoError(b, s.Close())
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				s, err := strata.Open(dir, opts)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
