package strata_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// TestCompactStatsCountAborted: the records of an aborted transaction that
// a cleaning drops count as Aborted in Store.Compact's stats, not as
// Superseded. Only records written count: those a transaction held in
// memory when it aborted were never written.
func TestCompactStatsCountAborted(t *testing.T) {
	s := stratatest.Open(t, &strata.Options{CleanerInterval: -1})
	require.NoError(t, s.CreateTopic("c", strata.TopicConfig{Partitions: 1, CleanupPolicy: strata.CleanupCompact,
		SegmentBytes: 1024, MaxBatchBytes: 200, MinCleanableDirtyRatio: -1}))
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	for range 5 { // four fill a batch and are written; the fifth is held
		require.NoError(t, tx.AppendTo(ctx, "c", 0, rec("only-aborted", strings.Repeat("a", 60))))
	}
	require.NoError(t, tx.Abort(ctx))
	written := 0
	for r, err := range s.View(strata.ReadUncommitted).Scan("c", 0, 0) {
		require.NoError(t, err)
		if string(r.Key) == "only-aborted" {
			written++
		}
	}
	require.Positive(t, written)
	for range 40 {
		_, err := s.AppendTo(ctx, "c", 0, rec("pad", strings.Repeat("p", 100)))
		require.NoError(t, err)
	}
	st, err := s.Compact(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, int64(written), st.Aborted, "%+v", st)
	for r, err := range s.View(strata.ReadUncommitted).Scan("c", 0, 0) {
		require.NoError(t, err)
		require.NotEqual(t, "only-aborted", string(r.Key))
	}
}
