package strata_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// TestListOffsetTime: AtTime returns the record found with its own
// timestamp; MaxTimestamp the first record with the largest timestamp,
// passing over transaction markers (stamped later than every record
// here), within the start offset, and -1 for an empty partition.
func TestListOffsetTime(t *testing.T) {
	ctx := context.Background()
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 64 << 10, MaxIndexBytes: 4 << 10}))
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }

	ot, err := s.ListOffsetTime("t", 0, strata.MaxTimestamp)
	require.NoError(t, err)
	require.Equal(t, strata.OffsetTime{Offset: -1}, ot, "empty")

	for _, m := range []int{5, 9, 3, 9, 7} {
		_, err := s.AppendTo(ctx, "t", 0, strata.Record{Value: make([]byte, 20<<10), Timestamp: at(m)})
		require.NoError(t, err)
	}
	txn, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, txn.AppendTo(ctx, "t", 0, strata.Record{Value: []byte("v"), Timestamp: at(1)}))
	require.NoError(t, txn.Commit(ctx))

	for _, tc := range []struct {
		spec strata.OffsetSpec
		want strata.OffsetTime
	}{
		{strata.MaxTimestamp, strata.OffsetTime{Offset: 1, Timestamp: at(9)}},
		{strata.AtTime(at(6)), strata.OffsetTime{Offset: 1, Timestamp: at(9)}},
		{strata.AtTime(at(1)), strata.OffsetTime{Offset: 0, Timestamp: at(5)}},
		{strata.AtTime(at(10)), strata.OffsetTime{Offset: -1}},
		{strata.Earliest, strata.OffsetTime{Offset: 0}},
		{strata.Latest, strata.OffsetTime{Offset: 7}},
	} {
		ot, err := s.ListOffsetTime("t", 0, tc.spec)
		require.NoError(t, err)
		require.Equal(t, tc.want.Offset, ot.Offset, "%+v", tc.spec)
		require.True(t, tc.want.Timestamp.Equal(ot.Timestamp), "%+v: %v", tc.spec, ot.Timestamp)
		off, err := s.ListOffsets("t", 0, tc.spec)
		require.NoError(t, err)
		require.Equal(t, tc.want.Offset, off)
	}

	require.NoError(t, s.DeleteRecords("t", 0, 2))
	ot, err = s.ListOffsetTime("t", 0, strata.MaxTimestamp)
	require.NoError(t, err)
	require.Equal(t, int64(3), ot.Offset, "the first of the two 9s is gone")
	require.True(t, at(9).Equal(ot.Timestamp))

	// An open transaction's record is the latest: read_uncommitted finds
	// it, read_committed the last record below the last stable offset.
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "y"})
	require.NoError(t, err)
	require.NoError(t, s.AddTxnPartitions(ctx, p, strata.TopicPartition{Topic: "t"}))
	_, _, err = s.AppendTxnBatch(ctx, p, "t", 0, txnBatch(p, 0, "open")) // stamped now
	require.NoError(t, err)
	ot, err = s.View(strata.ReadUncommitted).ListOffsetTime("t", 0, strata.MaxTimestamp)
	require.NoError(t, err)
	require.Equal(t, int64(7), ot.Offset, "read_uncommitted")
	require.True(t, ot.Timestamp.After(at(9)))
	ot, err = s.View(strata.ReadCommitted).ListOffsetTime("t", 0, strata.MaxTimestamp)
	require.NoError(t, err)
	require.Equal(t, int64(3), ot.Offset, "read_committed")
	require.True(t, at(9).Equal(ot.Timestamp))
	require.NoError(t, s.EndTxn(ctx, p, false))

	_, err = s.ListOffsetTime("t", 1, strata.MaxTimestamp)
	require.ErrorIs(t, err, strata.ErrUnknownPartition)
	_, err = s.ListOffsetTime("t", 0, strata.OffsetSpec{})
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
}
