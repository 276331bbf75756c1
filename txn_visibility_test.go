package strata_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// TestTxnVisibleUpToOtherOpenTxn pins what a committed transaction's
// visibility is in a partition another transaction is open in (Kafka's
// last stable offset): after T1's Commit, a ReadCommitted reader sees
// T1's records before T2's first offset and none after it, until T2
// ends; then all of T1, none of T2 (aborted).
func TestTxnVisibleUpToOtherOpenTxn(t *testing.T) {
	s := stratatest.Open(t, &strata.Options{Isolation: strata.ReadCommitted})
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 1, MaxBatchBytes: 300}))
	pad := strings.Repeat("x", 40)
	t1, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "t1"})
	require.NoError(t, err)
	t2, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "t2"})
	require.NoError(t, err)
	for i := range 5 { // a batch's worth each: written early, T1's first
		require.NoError(t, t1.AppendTo(ctx, "t", 0, rec("k", fmt.Sprintf("T1-%d-%s", i, pad))))
	}
	for i := range 5 {
		require.NoError(t, t2.AppendTo(ctx, "t", 0, rec("k", fmt.Sprintf("T2-%d-%s", i, pad))))
	}
	require.NoError(t, t1.AppendTo(ctx, "t", 0, rec("k", "T1-last")))
	require.NoError(t, t1.Commit(ctx))

	seen := func() (t1s, t2s int) {
		for r, err := range s.Scan("t", 0, 0) {
			require.NoError(t, err)
			switch {
			case strings.HasPrefix(string(r.Value), "T1-"):
				t1s++
			case strings.HasPrefix(string(r.Value), "T2-"):
				t2s++
			}
		}
		return t1s, t2s
	}
	t1s, t2s := seen()
	require.Less(t, t1s, 6, "T1's last record lies behind T2's first offset")
	require.Positive(t, t1s, "T1's early batch lies before it")
	require.Zero(t, t2s)
	require.NoError(t, t2.Abort(ctx))
	t1s, t2s = seen()
	require.Equal(t, 6, t1s, "all of T1 once T2 ended")
	require.Zero(t, t2s)
}
