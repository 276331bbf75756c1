package strata_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// TestPendingTxnOffset: an offset a transaction holds is pending from the
// call that adds it until the transaction ends, whichever way: committed,
// aborted, fenced by a new producer of the id, or timed out; and while two
// transactions hold one, until both have ended.
func TestPendingTxnOffset(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	require.NoError(t, s.CreateTopic("in", strata.TopicConfig{Partitions: 2}))
	for p := range 2 {
		_, err := s.AppendTo(ctx, "in", p, strata.Record{Value: []byte("v")})
		require.NoError(t, err)
	}
	in0, in1 := strata.TopicPartition{Topic: "in"}, strata.TopicPartition{Topic: "in", Partition: 1}
	hold := func(id string, timeout time.Duration, tps ...strata.TopicPartition) strata.TxnProducer {
		p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: id, Timeout: timeout})
		require.NoError(t, err)
		require.NoError(t, s.AddTxnPartitions(ctx, p))
		offs := map[strata.TopicPartition]strata.OffsetAndMetadata{}
		for _, tp := range tps {
			offs[tp] = strata.OffsetAndMetadata{Offset: 1}
		}
		require.NoError(t, s.CommitTxnOffsets(ctx, p, "g", offs))
		return p
	}
	pending := func(part int) bool { return s.PendingTxnOffset("g", "in", part) }

	p := hold("a", 0, in0)
	require.True(t, pending(0))
	require.False(t, pending(1))
	require.False(t, s.PendingTxnOffset("other", "in", 0))
	require.NoError(t, s.EndTxn(ctx, p, true))
	require.False(t, pending(0), "committed")
	om, ok := s.Committed("g", "in", 0)
	require.True(t, ok)
	require.Equal(t, int64(1), om.Offset)

	p = hold("a", 0, in0, in1)
	hold("b", 0, in1)
	require.NoError(t, s.EndTxn(ctx, p, false))
	require.False(t, pending(0), "aborted")
	require.True(t, pending(1), "b holds it still")
	_, err = s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "b"})
	require.NoError(t, err)
	require.False(t, pending(1), "b's transaction fenced")

	hold("c", 20*time.Millisecond, in1)
	require.True(t, pending(1))
	deadline := time.Now().Add(10 * time.Second)
	for pending(1) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.False(t, pending(1), "timed out")
	_, ok = s.Committed("g", "in", 1)
	require.False(t, ok)

	// A Txn's offsets alike.
	txn, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "d"})
	require.NoError(t, err)
	require.NoError(t, txn.CommitOffsets(ctx, "g", map[strata.TopicPartition]int64{in1: 1}))
	require.True(t, pending(1))
	require.NoError(t, txn.Abort(ctx))
	require.False(t, pending(1))
}
