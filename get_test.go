package strata_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/stratatest"
)

// TestGet reads every record of a topic back by offset, with Get and with
// GetInto: the fields as written (nil and empty told apart, headers), the
// record of GetInto in the caller's buffer, and Get's record the caller's
// to keep after the store is closed.
func TestGet(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	written := []strata.Record{
		{Key: []byte("a"), Value: []byte("one")},
		{Key: nil, Value: []byte("no key")},
		{Key: []byte{}, Value: []byte{}},
		{Key: []byte("tombstone")},
		{Key: []byte("h"), Value: []byte("with headers"), Headers: []strata.Header{{Key: "trace", Value: []byte("x1")}, {Key: "none"}}},
	}
	_, err := s.AppendTo(ctx, "t", 1, written[:2]...)
	require.NoError(t, err)
	for _, r := range written[2:] {
		_, err := s.AppendTo(ctx, "t", 1, r) // batches of one too
		require.NoError(t, err)
	}
	check := func(t *testing.T, off int, got strata.Record) {
		t.Helper()
		want := written[off]
		require.Equal(t, int64(off), got.Offset)
		require.Equal(t, want.Key == nil, got.Key == nil, "nil key")
		require.Equal(t, want.Value == nil, got.Value == nil, "nil value")
		require.Equal(t, string(want.Key), string(got.Key))
		require.Equal(t, string(want.Value), string(got.Value))
		require.Len(t, got.Headers, len(want.Headers))
		for i, h := range want.Headers {
			require.Equal(t, h.Key, got.Headers[i].Key)
			require.Equal(t, h.Value == nil, got.Headers[i].Value == nil)
			require.Equal(t, string(h.Value), string(got.Headers[i].Value))
		}
	}
	var kept []strata.Record
	buf := make([]byte, 256)
	for off := range written {
		r, err := s.Get("t", 1, int64(off))
		require.NoError(t, err, "offset %d", off)
		check(t, off, r)
		kept = append(kept, r)

		r, err = s.GetInto("t", 1, int64(off), buf)
		require.NoError(t, err, "offset %d", off)
		check(t, off, r)
		if len(r.Value) > 0 {
			require.Same(t, &buf[len(r.Key)], &r.Value[0], "the value is in the caller's buffer, after the key")
		}

		r, err = s.GetInto("t", 1, int64(off), make([]byte, 0, 1))
		require.NoError(t, err, "offset %d: a short buffer", off)
		check(t, off, r)
	}
	require.NoError(t, s.Close())
	for off, r := range kept {
		check(t, off, r)
	}
}

// TestGetIntoAllocatesNothing: a lookup of a record without headers into a
// buffer large enough allocates nothing; Get allocates the record's bytes.
func TestGetIntoAllocatesNothing(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	for i := range 20 {
		recs := make([]strata.Record, 50)
		for j := range recs {
			recs[j] = rec(fmt.Sprint("k", i), fmt.Sprint("value ", i*50+j))
		}
		_, err := s.AppendTo(ctx, "t", 0, recs...)
		require.NoError(t, err)
	}
	buf := make([]byte, 4096)
	off := int64(0)
	lookup := func(get func(int64) (strata.Record, error)) func() {
		return func() {
			r, err := get(off)
			if err != nil || r.Offset != off {
				t.Fatal(r.Offset, err)
			}
			off = (off + 97) % 1000
		}
	}
	require.Zero(t, testing.AllocsPerRun(300, lookup(func(off int64) (strata.Record, error) {
		return s.GetInto("t", 0, off, buf)
	})), "GetInto")
	require.Equal(t, 1.0, testing.AllocsPerRun(300, lookup(func(off int64) (strata.Record, error) {
		return s.Get("t", 0, off)
	})), "Get")
}

// TestGetBadInput: unknown topics and partitions, offsets outside
// [start, end) with the range in the message, and a store that is closed.
func TestGetBadInput(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	require.NoError(t, s.CreateTopic("empty", strata.TopicConfig{}))
	for i := range 10 {
		_, err := s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
	}
	require.NoError(t, s.DeleteRecords("t", 0, 4))
	tests := []struct {
		name      string
		topic     string
		part      int
		offset    int64
		want      error
		saysRange string
	}{
		{"unknown topic", "nope", 0, 0, strata.ErrUnknownTopic, ""},
		{"invalid topic name", "../x", 0, 0, strata.ErrInvalidTopic, ""},
		{"negative partition", "t", -1, 0, strata.ErrUnknownPartition, ""},
		{"partition past the last", "t", 2, 0, strata.ErrUnknownPartition, ""},
		{"negative offset", "t", 0, -1, strata.ErrOffsetOutOfRange, "[4, 10)"},
		{"below the start offset", "t", 0, 3, strata.ErrOffsetOutOfRange, "[4, 10)"},
		{"at the end offset", "t", 0, 10, strata.ErrOffsetOutOfRange, "[4, 10)"},
		{"past the end offset", "t", 0, 1 << 50, strata.ErrOffsetOutOfRange, "[4, 10)"},
		{"an empty partition", "t", 1, 0, strata.ErrOffsetOutOfRange, "[0, 0)"},
		{"an empty topic", "empty", 0, 0, strata.ErrOffsetOutOfRange, "[0, 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Get(tt.topic, tt.part, tt.offset)
			require.ErrorIs(t, err, tt.want)
			if tt.saysRange != "" {
				require.ErrorContains(t, err, tt.saysRange)
			}
			_, err = s.GetInto(tt.topic, tt.part, tt.offset, make([]byte, 64))
			require.ErrorIs(t, err, tt.want)
		})
	}
	r, err := s.Get("t", 0, 4)
	require.NoError(t, err)
	require.Equal(t, "4", string(r.Value), "the first retained record")

	require.NoError(t, s.Close())
	_, err = s.Get("t", 0, 4)
	require.ErrorIs(t, err, strata.ErrClosed)
	_, err = s.GetInto("t", 0, 4, nil)
	require.ErrorIs(t, err, strata.ErrClosed)
}

// TestGetKafkaDirectory looks up every offset of a partition laid out as
// Kafka writes it: records of every codec read back, and the offsets that
// hold none — transaction markers, offsets a cleaning removed inside and
// between batches, an emptied batch — are ErrNoRecord.
func TestGetKafkaDirectory(t *testing.T) {
	s, _, want, end := openKafkaDir(t, false, kafkadir.Files{})
	defer s.Close()
	byOffset := map[int64]kafkaRecord{}
	for _, w := range want {
		byOffset[w.offset] = w
	}
	buf := make([]byte, 1024)
	for off := range end {
		r, err := s.GetInto("k", 0, off, buf)
		w, ok := byOffset[off]
		if !ok {
			require.ErrorIs(t, err, strata.ErrNoRecord, "offset %d", off)
			continue
		}
		require.NoError(t, err, "offset %d", off)
		requireKafkaRecords(t, []kafkaRecord{w}, off, []strata.Record{r})
		require.Equal(t, w.ts, r.Timestamp, "offset %d", off)
	}
	require.Less(t, len(byOffset), int(end), "some offsets hold no record")
	_, err := s.Get("k", 0, end)
	require.ErrorIs(t, err, strata.ErrOffsetOutOfRange)
}

// TestGetDamagedBatch: a lookup of a record in a damaged batch is
// ErrCorrupt; the records around it read back.
func TestGetDamagedBatch(t *testing.T) {
	s := openDamaged(t, 20, 12)
	_, err := s.Get("t", 0, 12)
	require.ErrorIs(t, err, strata.ErrCorrupt)
	for _, off := range []int64{11, 13} {
		r, err := s.Get("t", 0, off)
		require.NoError(t, err, "offset %d", off)
		require.Equal(t, fmt.Sprintf("value-%02d", off), string(r.Value))
	}
}

// TestGetCompacted: after a cleaning, the offsets it removed are
// ErrNoRecord and the latest value of every key reads back.
func TestGetCompacted(t *testing.T) {
	s := stratatest.Open(t, &strata.Options{CleanerInterval: -1})
	require.NoError(t, s.CreateTopic("c", strata.TopicConfig{CleanupPolicy: strata.CleanupCompact, SegmentBytes: 1024}))
	const n = 60
	for i := range n {
		_, err := s.AppendTo(ctx, "c", 0, rec(fmt.Sprint("k", i%4), fmt.Sprint(i)))
		require.NoError(t, err)
	}
	_, err := s.Compact(ctx, "c")
	require.NoError(t, err)
	kept := map[int64]bool{}
	recs, err := s.Read(ctx, "c", 0, 0, n)
	require.NoError(t, err)
	for _, r := range recs {
		kept[r.Offset] = true
	}
	require.Less(t, len(kept), n/2, "the cleaning removed most offsets")
	for off := range int64(n) {
		r, err := s.Get("c", 0, off)
		if !kept[off] {
			require.ErrorIs(t, err, strata.ErrNoRecord, "offset %d", off)
			continue
		}
		require.NoError(t, err, "offset %d", off)
		require.Equal(t, fmt.Sprint(off), string(r.Value))
	}
	for k := range int64(4) {
		_, err := s.Get("c", 0, n-4+k)
		require.NoError(t, err, "the latest value of each key stays")
	}
}
