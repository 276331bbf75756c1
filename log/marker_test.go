package log_test

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"testing"
	"time"

	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
	"github.com/stretchr/testify/require"
)

// A marker batch is the bytes Kafka's MemoryRecords.withEndTransactionMarker
// writes: what kafkadir builds field by field, apart from the leader epoch
// (-1 here, the broker's there) which lies outside the CRC.
func TestEncodeControlBatchKafkaBytes(t *testing.T) {
	ts := time.UnixMilli(1_700_000_000_123)
	for _, commit := range []bool{true, false} {
		typ := log.ControlAbort
		if commit {
			typ = log.ControlCommit
		}
		b, err := log.EncodeControlBatch(nil, typ, log.MarkerOptions{
			BaseOffset: 42, Now: ts.UnixMilli(), ProducerID: 9001, ProducerEpoch: 3, CoordinatorEpoch: 7,
		})
		require.NoError(t, err)
		h, err := log.CheckBatch(b)
		require.NoError(t, err)
		require.True(t, h.IsControl())
		require.True(t, h.IsTransactional())
		require.Equal(t, int32(-1), h.PartitionLeaderEpoch)
		require.Equal(t, int32(-1), h.BaseSequence)
		require.Equal(t, int32(1), h.NumRecords)

		want := kafkadir.Control(42, commit, 9001, 3, ts)
		log.SetPartitionLeaderEpoch(b, 0)
		require.Equal(t, want, b, "commit=%v", commit)

		it, err := log.NewRecordIter(b)
		require.NoError(t, err)
		var r log.Record
		require.True(t, it.Next(&r))
		got, err := log.ParseControlKey(r.Key)
		require.NoError(t, err)
		require.Equal(t, typ, got)
		epoch, err := log.ParseEndTxnMarker(r.Value)
		require.NoError(t, err)
		require.Equal(t, int32(7), epoch)
		require.Equal(t, int64(42), r.Offset)
		require.Equal(t, ts.UnixMilli(), r.Timestamp.UnixMilli())
	}
}

// The whole 78-byte COMMIT marker of producer 1, epoch 0, coordinator epoch
// 0, at offset 5 and time 0, byte for byte.
func TestEncodeControlBatchGolden(t *testing.T) {
	b, err := log.EncodeControlBatch(nil, log.ControlCommit, log.MarkerOptions{BaseOffset: 5, ProducerID: 1})
	require.NoError(t, err)
	want := unhex(t, `
00 00 00 00 00 00 00 05  00 00 00 42  ff ff ff ff  02  00 00 00 00  00 30  00 00 00 00
00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 01  00 00  ff ff ff ff  00 00 00 01
20 00 00 00 08 00 00 00 01 0c 00 00 00 00 00 00 00`)
	binary.BigEndian.PutUint32(want[17:], crc32.Checksum(want[21:], crc32.MakeTable(crc32.Castagnoli)))
	require.Equal(t, want, b)
	_, err = log.CheckBatch(b)
	require.NoError(t, err)
}

func TestEncodeControlBatchRefuses(t *testing.T) {
	dst := []byte("kept")
	for name, c := range map[string]struct {
		typ log.ControlType
		o   log.MarkerOptions
	}{
		"leader change": {typ: log.ControlLeaderChange, o: log.MarkerOptions{ProducerID: 1}},
		"no producer":   {typ: log.ControlAbort, o: log.MarkerOptions{ProducerID: -1}},
		"bad epoch":     {typ: log.ControlCommit, o: log.MarkerOptions{ProducerID: 1, ProducerEpoch: -1}},
	} {
		got, err := log.EncodeControlBatch(dst, c.typ, c.o)
		require.ErrorIs(t, err, log.ErrInvalidBatch, name)
		require.Equal(t, "kept", string(got), name)
	}
}

func TestParseEndTxnMarker(t *testing.T) {
	for name, c := range map[string]struct {
		value []byte
		want  int32
		err   bool
	}{
		"v0":         {value: []byte{0, 0, 0, 0, 0, 7}, want: 7},
		"later":      {value: []byte{0, 1, 0, 0, 1, 0, 9, 9}, want: 256},
		"short":      {value: []byte{0, 0, 0, 0, 7}, err: true},
		"negative v": {value: []byte{0x80, 0, 0, 0, 0, 7}, err: true},
	} {
		got, err := log.ParseEndTxnMarker(c.value)
		if c.err {
			require.ErrorIs(t, err, log.ErrCorrupt, name)
			continue
		}
		require.NoError(t, err, name)
		require.Equal(t, c.want, got, name)
	}
}

func TestEncodeBatchTransactional(t *testing.T) {
	recs := []log.Record{{Value: []byte("v")}}
	b, err := log.EncodeBatch(nil, recs, log.BatchOptions{Idempotent: true, Transactional: true, ProducerID: 4, ProducerEpoch: 1, BaseSequence: 10})
	require.NoError(t, err)
	h, err := log.CheckBatch(b)
	require.NoError(t, err)
	require.True(t, h.IsTransactional())
	require.False(t, h.IsControl())
	require.Equal(t, int64(4), h.ProducerID)
	_, err = log.EncodeBatch(nil, recs, log.BatchOptions{Transactional: true})
	require.ErrorIs(t, err, log.ErrInvalidBatch)
}

// ParseControlBatch returns the type and coordinator epoch of a marker
// batch, ok false for one emptied of its records, and the parser's error
// for a marker value that does not parse.
func TestParseControlBatch(t *testing.T) {
	for _, typ := range []log.ControlType{log.ControlCommit, log.ControlAbort} {
		b, err := log.EncodeControlBatch(nil, typ, log.MarkerOptions{BaseOffset: 7, ProducerID: 3, CoordinatorEpoch: 11})
		require.NoError(t, err)
		h, err := log.CheckBatch(b)
		require.NoError(t, err)
		for _, d := range []*log.Decoder{nil, new(log.Decoder)} {
			got, epoch, ok, err := log.ParseControlBatch(d, b, h)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, typ, got)
			require.Equal(t, int32(11), epoch)
		}
	}

	h := log.BatchHeader{Attributes: log.AttrTransactional | log.AttrControl, ProducerID: 3, BaseSequence: -1, PartitionLeaderEpoch: -1}
	empty, err := log.EncodeBatchWithHeader(nil, h, nil)
	require.NoError(t, err)
	eh, err := log.CheckBatch(empty)
	require.NoError(t, err)
	_, _, ok, err := log.ParseControlBatch(nil, empty, eh)
	require.NoError(t, err)
	require.False(t, ok)

	short := []log.Record{{Key: []byte{0, 0, 0, byte(log.ControlCommit)}, Value: []byte{0, 0}}}
	bad, err := log.EncodeBatchWithHeader(nil, h, short)
	require.NoError(t, err)
	bh, err := log.CheckBatch(bad)
	require.NoError(t, err)
	_, _, ok, err = log.ParseControlBatch(nil, bad, bh)
	require.ErrorIs(t, err, log.ErrCorrupt)
	require.False(t, ok)
}

// IncrementSequence wraps past MaxInt32 to 0, as Kafka's
// DefaultRecordBatch.incrementSequence does.
func TestIncrementSequence(t *testing.T) {
	for _, tc := range []struct{ seq, delta, want int32 }{
		{0, 0, 0},
		{5, 3, 8},
		{math.MaxInt32 - 1, 1, math.MaxInt32},
		{math.MaxInt32, 1, 0},
		{math.MaxInt32 - 1, 3, 1},
		{math.MaxInt32, math.MaxInt32, math.MaxInt32 - 1},
	} {
		require.Equal(t, tc.want, log.IncrementSequence(tc.seq, tc.delta), "%d + %d", tc.seq, tc.delta)
	}
}
