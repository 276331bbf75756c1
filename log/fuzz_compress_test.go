package log_test

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
)

// FuzzDecompress feeds arbitrary bytes to every codec's decompressor as a
// batch's records section (its CRC made to match, so that the stream is
// what is tested): reading never panics, never allocates past the
// Decoder's limit (a bounded output buffer), and fails only with the
// errors a reader expects.
func FuzzDecompress(f *testing.F) {
	for _, c := range codecs {
		for _, n := range []int{1, 10, 100} {
			b, err := log.EncodeBatch(nil, jsonRecords(n, uint64(n)), log.BatchOptions{Now: 1, Compression: c})
			if err != nil {
				f.Fatal(err)
			}
			h, _ := log.ReadHeader(b)
			f.Add(byte(c), uint16(h.NumRecords), b[log.BatchHeaderSize:])
		}
	}
	f.Add(byte(log.Snappy), uint16(1), []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	const limit = 1 << 20
	f.Fuzz(func(t *testing.T, codec byte, n uint16, stream []byte) {
		c := log.Compression(codec%4 + 1)
		template, err := log.EncodeBatch(nil, jsonRecords(1, 1), log.BatchOptions{Now: 1})
		require.NoError(t, err)
		binary.BigEndian.PutUint32(template[23:], uint32(n))   // last offset delta
		binary.BigEndian.PutUint32(template[57:], uint32(n)+1) // records
		b := kafkadir.WithSection(template, stream, c)
		h, err := log.CheckBatch(b)
		if err != nil {
			return // a header the counts make invalid
		}
		d := log.Decoder{Limit: limit}
		it, err := d.Iter(b, h)
		if err == nil {
			var r log.Record
			for it.Next(&r) {
				require.LessOrEqual(t, len(r.Value), limit)
			}
			err = it.Err()
		}
		if err != nil {
			require.True(t, errors.Is(err, log.ErrCorrupt) || errors.Is(err, log.ErrTooLarge), "unexpected error %v", err)
		}
	})
}

// FuzzCompressRoundTrip compresses records made from the input with every
// codec and reads them back unchanged.
func FuzzCompressRoundTrip(f *testing.F) {
	f.Add([]byte("key"), []byte("value"), uint8(3))
	f.Add([]byte{}, []byte{}, uint8(1))
	f.Add([]byte(nil), make([]byte, 5000), uint8(200))
	f.Fuzz(func(t *testing.T, key, value []byte, n uint8) {
		recs := make([]log.Record, int(n)%50+1)
		for i := range recs {
			recs[i] = log.Record{Key: key, Value: value[:len(value)*i/len(recs)]}
		}
		var d log.Decoder
		for _, c := range codecs {
			b, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1, Compression: c})
			require.NoError(t, err)
			got := readAll(t, &d, b)
			require.Len(t, got, len(recs))
			for i := range recs {
				require.Equal(t, recs[i].Key == nil, got[i].Key == nil)
				require.Equal(t, string(recs[i].Key), string(got[i].Key))
				require.Equal(t, string(recs[i].Value), string(got[i].Value))
			}
		}
	})
}

// TestBatchIter walks batches and legacy messages back to back, and stops
// at a torn one with its error.
func TestBatchIter(t *testing.T) {
	a, err := log.EncodeBatch(nil, jsonRecords(3, 1), log.BatchOptions{BaseOffset: 10, Now: 1, Compression: log.Zstd})
	require.NoError(t, err)
	b := kafkadir.Legacy(1, 13, time.UnixMilli(1_500_000_000_000), []byte("k"), []byte("v"))
	c, err := log.EncodeBatch(nil, jsonRecords(2, 2), log.BatchOptions{BaseOffset: 14, Now: 1})
	require.NoError(t, err)
	all := append(append(append([]byte(nil), a...), b...), c...)
	var got []int64
	var pos []int
	it := log.NewBatchIter(all)
	for it.Next() {
		got = append(got, it.Header().BaseOffset)
		pos = append(pos, it.Pos())
		require.Len(t, it.Batch(), it.Header().Size())
	}
	require.NoError(t, it.Err())
	require.Equal(t, []int64{10, 13, 14}, got)
	require.Equal(t, []int{0, len(a), len(a) + len(b)}, pos)

	it = log.NewBatchIter(all[:len(all)-1])
	n := 0
	for it.Next() {
		n++
	}
	require.Equal(t, 2, n)
	require.ErrorIs(t, it.Err(), log.ErrIncomplete)
}
