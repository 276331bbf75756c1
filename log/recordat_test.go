package log_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// TestReadRecordAt reads every record of a batch, uncompressed and
// compressed, under either timestamp type, at the point its length
// prefixes lead to: each is the record an iterator from the first reads
// there, headers and timestamps included (under LogAppendTime, the
// batch's).
// After the last record there is none; points no record can start at, and
// a batch whose records do not fill it, are ErrCorrupt.
func TestReadRecordAt(t *testing.T) {
	recs := someRecords(20, 30)
	recs[3].Headers = []log.Header{{Key: "h", Value: []byte("v")}, {Key: "empty", Value: []byte{}}}
	for _, tc := range []struct {
		c  log.Compression
		tt log.TimestampType
	}{{log.None, log.CreateTime}, {log.Gzip, log.CreateTime}, {log.LZ4, log.CreateTime}, {log.None, log.LogAppendTime}, {log.LZ4, log.LogAppendTime}} {
		c := tc.c
		t.Run(c.String()+"/"+tc.tt.String(), func(t *testing.T) {
			batch, err := log.EncodeBatch(nil, recs, log.BatchOptions{BaseOffset: 100, Compression: c, Now: 1, TimestampType: tc.tt})
			require.NoError(t, err)
			h, err := log.ReadHeader(batch)
			require.NoError(t, err)
			var dec log.Decoder
			plain, err := dec.Plain(batch, h)
			require.NoError(t, err)
			it, err := dec.Iter(batch, h)
			require.NoError(t, err)
			pos := log.BatchHeaderSize
			for k := range len(recs) {
				var want, got log.Record
				require.True(t, it.Next(&want))
				ok, err := log.ReadRecordAt(plain, &h, pos, int32(k), int64(k)-1, &got)
				require.NoError(t, err, "record %d", k)
				require.True(t, ok, "record %d", k)
				require.Equal(t, want, got, "record %d", k)
				n, length, err := log.RecordLength(plain[pos:])
				require.NoError(t, err)
				pos += n + length
			}
			var r log.Record
			ok, err := log.ReadRecordAt(plain, &h, pos, int32(len(recs)), int64(len(recs))-1, &r)
			n0, length0, err0 := log.RecordLength(plain[log.BatchHeaderSize:])
			require.NoError(t, err0)
			second := log.BatchHeaderSize + n0 + length0
			require.NoError(t, err)
			require.False(t, ok)

			for _, p := range []struct {
				pos  int
				read int32
				prev int64
			}{
				{log.BatchHeaderSize - 1, 0, -1},
				{len(plain) + 1, 20, 19},
				{log.BatchHeaderSize, 1, 0},
				{log.BatchHeaderSize + 10, 0, -1},
				{log.BatchHeaderSize + 10, 21, 0},
				{log.BatchHeaderSize + 10, 1, 20},
				{log.BatchHeaderSize + 1, 1, 0}, // inside the first record
				{second, 0, -1},                 // a record, yet none stepped over
				{len(plain) + 1, 5, 4},
				{1 << 30, 5, 4},
			} {
				_, err := log.ReadRecordAt(plain, &h, p.pos, p.read, p.prev, &r)
				require.ErrorIs(t, err, log.ErrCorrupt, "%+v", p)
			}
			// Told 18 records were stepped over to reach the end of a batch
			// of 20: the two missing are found there.
			_, err = log.ReadRecordAt(plain, &h, len(plain), 18, 17, &r)
			require.ErrorIs(t, err, log.ErrCorrupt)
		})
	}
}
