package log_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stretchr/testify/require"
)

// someRecords returns n records with small keys and size-byte values.
func someRecords(n, size int) []log.Record {
	recs := make([]log.Record, n)
	for i := range recs {
		recs[i] = log.Record{
			Timestamp: time.UnixMilli(1700000000000 + int64(i)),
			Key:       fmt.Appendf(nil, "key-%04d", i),
			Value:     bytes.Repeat([]byte{byte(i)}, size),
		}
	}
	return recs
}

func TestRoundTrip(t *testing.T) {
	const now = 1700000000000
	sub := time.UnixMilli(1700000000123).Add(456789 * time.Nanosecond)
	tests := []struct {
		name string
		recs []log.Record
		opts log.BatchOptions
	}{
		{"nil key and value", []log.Record{{}}, log.BatchOptions{Now: now}},
		{"empty key and value", []log.Record{{Key: []byte{}, Value: []byte{}}}, log.BatchOptions{Now: now}},
		{"tombstone", []log.Record{{Key: []byte("k"), Value: nil}}, log.BatchOptions{Now: now}},
		{"headers", []log.Record{{
			Key: []byte("k"), Value: []byte("v"),
			Headers: []log.Header{{Key: "nil", Value: nil}, {Key: "empty", Value: []byte{}}, {Key: "", Value: []byte("x")}},
		}}, log.BatchOptions{Now: now}},
		{"many headers", []log.Record{{Headers: manyHeaders(300)}}, log.BatchOptions{Now: now}},
		{"large value", []log.Record{{Value: bytes.Repeat([]byte("ab"), 100_000)}}, log.BatchOptions{Now: now}},
		{"one record", someRecords(1, 100), log.BatchOptions{}},
		{"1000 records", someRecords(1000, 10), log.BatchOptions{BaseOffset: 5000}},
		{"timestamps out of order", []log.Record{
			{Timestamp: time.UnixMilli(50)}, {Timestamp: time.UnixMilli(-7)}, {Timestamp: time.UnixMilli(1 << 50)},
		}, log.BatchOptions{}},
		{"sub-millisecond time truncated", []log.Record{{Timestamp: sub}}, log.BatchOptions{}},
		{"zero timestamp is now", []log.Record{{}, {Timestamp: time.UnixMilli(5)}}, log.BatchOptions{Now: now}},
		{"log append time", someRecords(3, 5), log.BatchOptions{TimestampType: log.LogAppendTime, Now: now + 99}},
		{"idempotent", someRecords(3, 5), log.BatchOptions{
			Idempotent: true, ProducerID: 1 << 40, ProducerEpoch: 7, BaseSequence: 2147483646,
		}},
		{"offset in record ignored", []log.Record{{Offset: 99}, {Offset: 3}}, log.BatchOptions{BaseOffset: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("prefix")
			b, err := log.EncodeBatch(prefix, tt.recs, tt.opts)
			require.NoError(t, err)
			require.Equal(t, prefix, b[:len(prefix)])
			b = b[len(prefix):]

			h, err := log.Validate(b)
			require.NoError(t, err)
			require.Equal(t, len(b), h.Size())
			require.Equal(t, int32(len(tt.recs)), h.NumRecords)
			require.Equal(t, tt.opts.BaseOffset, h.BaseOffset)
			require.Equal(t, tt.opts.BaseOffset+int64(len(tt.recs)), h.NextOffset())
			require.Equal(t, int32(-1), h.PartitionLeaderEpoch)
			require.Equal(t, tt.opts.TimestampType, h.TimestampType())
			require.Equal(t, log.None, h.Compression())
			if tt.opts.Idempotent {
				require.Equal(t, tt.opts.ProducerID, h.ProducerID)
				require.Equal(t, tt.opts.ProducerEpoch, h.ProducerEpoch)
				require.Equal(t, tt.opts.BaseSequence, h.BaseSequence)
			} else {
				require.Equal(t, [3]int64{-1, -1, -1}, [3]int64{h.ProducerID, int64(h.ProducerEpoch), int64(h.BaseSequence)})
			}

			want := expected(tt.recs, tt.opts)
			stored := expected(tt.recs, log.BatchOptions{BaseOffset: tt.opts.BaseOffset, Now: tt.opts.Now})
			require.Equal(t, stored[0].Timestamp.UnixMilli(), h.BaseTimestamp)
			require.Equal(t, maxTimestamp(stored, tt.opts), h.MaxTimestamp)
			require.Equal(t, want, collect(t, b))

			// RecordIter reusing one Record gives the same.
			it, err := log.NewRecordIter(b)
			require.NoError(t, err)
			require.Equal(t, h, it.Header())
			var r log.Record
			for i := 0; it.Next(&r); i++ {
				require.Equal(t, want[i], r)
			}
			require.NoError(t, it.Err())
		})
	}
}

func manyHeaders(n int) []log.Header {
	hs := make([]log.Header, n)
	for i := range hs {
		hs[i] = log.Header{Key: fmt.Sprint("h", i), Value: []byte(fmt.Sprint(i))}
	}
	return hs
}

// expected returns what reading back recs encoded with opts gives.
func expected(recs []log.Record, opts log.BatchOptions) []log.Record {
	want := make([]log.Record, len(recs))
	for i, r := range recs {
		ts := r.Timestamp.UnixMilli()
		if r.Timestamp.IsZero() {
			ts = opts.Now
		}
		if opts.TimestampType == log.LogAppendTime {
			ts = opts.Now
		}
		r.Offset = opts.BaseOffset + int64(i)
		r.Timestamp = time.UnixMilli(ts).UTC()
		if len(r.Headers) == 0 {
			r.Headers = nil
		}
		want[i] = r
	}
	return want
}

func maxTimestamp(recs []log.Record, opts log.BatchOptions) int64 {
	if opts.TimestampType == log.LogAppendTime {
		return opts.Now
	}
	m := recs[0].Timestamp.UnixMilli()
	for _, r := range recs {
		m = max(m, r.Timestamp.UnixMilli())
	}
	return m
}

func TestLogAppendTimeKeepsStoredTimestamps(t *testing.T) {
	recs := someRecords(3, 1)
	b, err := log.EncodeBatch(nil, recs, log.BatchOptions{TimestampType: log.LogAppendTime, Now: 42})
	require.NoError(t, err)
	it, err := log.NewRecordIter(b)
	require.NoError(t, err)
	var r log.Record
	for i := 0; it.Next(&r); i++ {
		require.Equal(t, int64(42), r.Timestamp.UnixMilli())
		require.Equal(t, recs[i].Timestamp.UnixMilli(), it.StoredTimestamp())
	}
	require.NoError(t, it.Err())
}

func TestSetBaseOffsetAndEpoch(t *testing.T) {
	b := goldenBatch(t)
	log.SetBaseOffset(b, 1<<40)
	log.SetPartitionLeaderEpoch(b, 17)
	h, err := log.CheckBatch(b)
	require.NoError(t, err)
	require.Equal(t, int64(1<<40), h.BaseOffset)
	require.Equal(t, int32(17), h.PartitionLeaderEpoch)
	require.Equal(t, int64(1<<40+1), h.LastOffset())
	_, err = log.Validate(b)
	require.NoError(t, err)
	recs := collect(t, b)
	require.Equal(t, int64(1<<40), recs[0].Offset)
	require.Equal(t, int64(1<<40+1), recs[1].Offset)
}

// TestSetLogAppendTime stamps a CreateTime batch with an append time: the
// CRC still checks, the header says LogAppendTime and the time, and each
// record keeps its stored timestamp while readers report the append time.
func TestSetLogAppendTime(t *testing.T) {
	b := append(goldenBatch(t), "trailing bytes are not the batch's"...)
	before := collect(t, b)
	stored := make([]int64, 0, len(before))
	it, err := log.NewRecordIter(b)
	require.NoError(t, err)
	var r log.Record
	for it.Next(&r) {
		stored = append(stored, it.StoredTimestamp())
	}
	log.SetLogAppendTime(b, 1_800_000_000_000)
	h, err := log.CheckBatch(b)
	require.NoError(t, err)
	require.Equal(t, log.LogAppendTime, h.TimestampType())
	require.Equal(t, int64(1_800_000_000_000), h.MaxTimestamp)
	_, err = log.Validate(b)
	require.NoError(t, err)
	it, err = log.NewRecordIter(b)
	require.NoError(t, err)
	for i := 0; it.Next(&r); i++ {
		require.Equal(t, int64(1_800_000_000_000), r.Timestamp.UnixMilli())
		require.Equal(t, stored[i], it.StoredTimestamp())
		require.Equal(t, before[i].Value, r.Value)
	}
	require.NoError(t, it.Err())
}

func TestEncodeBatchWithHeaderKeepsOffsets(t *testing.T) {
	// Compaction drops records but keeps the batch's offsets and header.
	b, err := log.EncodeBatch(nil, someRecords(5, 3), log.BatchOptions{BaseOffset: 100, Now: 1})
	require.NoError(t, err)
	all := collect(t, b)
	h, err := log.ReadHeader(b)
	require.NoError(t, err)

	kept := []log.Record{all[0], all[2], all[3]}
	out, err := log.EncodeBatchWithHeader(nil, h, kept)
	require.NoError(t, err)
	got, err := log.Validate(out)
	require.NoError(t, err)
	require.Equal(t, h.BaseOffset, got.BaseOffset)
	require.Equal(t, h.LastOffset(), got.LastOffset())
	require.Equal(t, h.MaxTimestamp, got.MaxTimestamp)
	require.Equal(t, int32(3), got.NumRecords)
	require.Equal(t, kept, collect(t, out))

	// All of them again gives the original bytes.
	again, err := log.EncodeBatchWithHeader(nil, h, all)
	require.NoError(t, err)
	require.Equal(t, b, again)

	// No record at all: an empty batch, header only.
	empty, err := log.EncodeBatchWithHeader(nil, h, nil)
	require.NoError(t, err)
	require.Len(t, empty, log.BatchHeaderSize)
	got, err = log.Validate(empty)
	require.NoError(t, err)
	require.Equal(t, int32(0), got.NumRecords)
	require.Equal(t, h.NextOffset(), got.NextOffset())
	require.Empty(t, collect(t, empty))
}

func TestAttributes(t *testing.T) {
	tests := []struct {
		name  string
		attrs int16
		want  [3]bool // transactional, control, delete horizon
	}{
		{"none", 0, [3]bool{}},
		{"transactional", log.AttrTransactional, [3]bool{true, false, false}},
		{"control", log.AttrTransactional | log.AttrControl, [3]bool{true, true, false}},
		{"delete horizon", log.AttrDeleteHorizon | log.AttrLogAppendTime, [3]bool{false, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := log.EncodeBatchWithHeader(nil, log.BatchHeader{Attributes: tt.attrs}, []log.Record{{}})
			require.NoError(t, err)
			h, err := log.Validate(b)
			require.NoError(t, err)
			require.Equal(t, tt.attrs, h.Attributes)
			require.Equal(t, tt.want, [3]bool{h.IsTransactional(), h.IsControl(), h.HasDeleteHorizon()})
			require.Equal(t, tt.attrs&log.AttrLogAppendTime != 0, h.TimestampType() == log.LogAppendTime)
		})
	}
}

func TestTypeStrings(t *testing.T) {
	require.Equal(t, []string{"none", "gzip", "snappy", "lz4", "zstd", "compression(5)"},
		[]string{log.None.String(), log.Gzip.String(), log.Snappy.String(), log.LZ4.String(),
			log.Zstd.String(), log.Compression(5).String()})
	require.Equal(t, []string{"CreateTime", "LogAppendTime", "TimestampType(2)"},
		[]string{log.CreateTime.String(), log.LogAppendTime.String(), log.TimestampType(2).String()})
}

// TestRecordSize checks RecordFieldsSize and RecordSize against the encoder:
// the sizes of a batch's records, each at its offset and timestamp delta,
// add up to the batch's size after its header.
func TestRecordSize(t *testing.T) {
	base := time.UnixMilli(1_700_000_000_000)
	recs := []log.Record{
		{Key: []byte("k"), Value: []byte("v"), Timestamp: base},
		{Value: nil, Timestamp: base.Add(time.Hour)},
		{Key: []byte{}, Value: make([]byte, 300), Timestamp: base.Add(-time.Minute)},
		{Key: []byte("h"), Headers: []log.Header{{Key: "a", Value: nil}, {Key: "bb", Value: make([]byte, 200)}}, Timestamp: base},
	}
	b, err := log.EncodeBatch(nil, recs, log.BatchOptions{})
	require.NoError(t, err)
	total := 0
	for i := range recs {
		r := &recs[i]
		total += log.RecordSize(log.RecordFieldsSize(r), int32(i), r.Timestamp.UnixMilli()-base.UnixMilli())
	}
	require.Equal(t, len(b)-log.BatchHeaderSize, total)
}
