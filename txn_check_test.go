package strata_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// TestTxnAppendChecksEachRecord: a record that AppendTo would refuse alone
// is refused by the transaction's Append and AppendTo, with the same
// sentinel, and changes nothing: the transaction commits what it held.
func TestTxnAppendChecksEachRecord(t *testing.T) {
	s := stratatest.Open(t, &strata.Options{Isolation: strata.ReadCommitted})
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 1, MaxBatchBytes: 1024}))
	require.NoError(t, s.CreateTopic("z", strata.TopicConfig{Partitions: 1, MaxBatchBytes: 1024, Compression: strata.CompressionGzip}))
	big := strata.Record{Key: []byte("k"), Value: []byte(strings.Repeat("x", 2000))}
	ahead := strata.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: time.Now().Add(1000 * time.Hour)}
	for _, tc := range []struct {
		name string
		rec  strata.Record
		want error
	}{
		{"over MaxBatchBytes", big, strata.ErrBatchTooLarge},
		{"too far ahead", ahead, strata.ErrTimestampTooFarAhead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.AppendTo(ctx, "t", 0, tc.rec)
			require.ErrorIs(t, err, tc.want, "AppendTo refuses it")
			tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: tc.name})
			require.NoError(t, err)
			require.NoError(t, tx.AppendTo(ctx, "t", 0, rec("k", "good-"+tc.name)))
			require.ErrorIs(t, tx.AppendTo(ctx, "t", 0, tc.rec), tc.want)
			require.ErrorIs(t, tx.Append(ctx, "t", rec("k", "ok"), tc.rec), tc.want, "Append, second of two")
			require.NoError(t, tx.Commit(ctx), "the refused records changed nothing")
		})
	}
	var got []string
	for r, err := range s.Scan("t", 0, 0) {
		require.NoError(t, err)
		got = append(got, string(r.Value))
	}
	require.Equal(t, []string{"good-over MaxBatchBytes", "good-too far ahead"}, got)

	// Compressed, a large record that compresses fits, as AppendTo takes it.
	_, err := s.AppendTo(ctx, "z", 0, big)
	require.NoError(t, err)
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "z"})
	require.NoError(t, err)
	require.NoError(t, tx.AppendTo(ctx, "z", 0, big))
	require.NoError(t, tx.Commit(ctx))
}
