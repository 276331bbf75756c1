package log_test

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"testing"

	"github.com/stratalog/strata/log"
	"github.com/stretchr/testify/require"
)

// fixCRC recomputes the CRC of the batch b, written independently of the
// package's encoder.
func fixCRC(b []byte) []byte {
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// rawBatch builds a batch around raw record bytes, with a valid CRC.
func rawBatch(lastOffsetDelta, numRecords int32, records ...[]byte) []byte {
	b := make([]byte, log.BatchHeaderSize)
	be := binary.BigEndian
	be.PutUint32(b[12:], math.MaxUint32) // leader epoch -1
	b[16] = log.Magic
	be.PutUint32(b[23:], uint32(lastOffsetDelta))
	for _, off := range []int{43, 51, 53} { // producer fields -1
		b[off], b[off+1] = 0xff, 0xff
	}
	be.PutUint32(b[45:], math.MaxUint32)
	be.PutUint16(b[55:], math.MaxUint16)
	be.PutUint32(b[57:], uint32(numRecords))
	for _, r := range records {
		b = append(b, r...)
	}
	be.PutUint32(b[8:], uint32(len(b)-12))
	return fixCRC(b)
}

// rec prefixes a record body with its length varint.
func rec(t testing.TB, body string) []byte {
	b := unhex(t, body)
	return append(log.AppendVarint(nil, int32(len(b))), b...)
}

func TestTruncatedAtEveryByte(t *testing.T) {
	batches := map[string][]byte{"golden": goldenBatch(t), "headers": fuzzSeeds(t)["headers"]}
	for name, b := range batches {
		t.Run(name, func(t *testing.T) {
			for i := range len(b) {
				short := b[:i]
				_, err := log.ReadHeader(short)
				if i < log.BatchHeaderSize {
					require.ErrorIs(t, err, log.ErrIncomplete, "header cut at %d", i)
				} else {
					require.NoError(t, err, "header cut at %d", i)
				}
				_, err = log.CheckBatch(short)
				require.ErrorIs(t, err, log.ErrIncomplete, "cut at %d", i)
				_, err = log.Validate(short)
				require.ErrorIs(t, err, log.ErrIncomplete, "cut at %d", i)
				_, err = log.NewRecordIter(short)
				require.ErrorIs(t, err, log.ErrIncomplete, "cut at %d", i)
			}
		})
	}
}

func TestEveryByteFlipIsCorrupt(t *testing.T) {
	batches := map[string][]byte{"golden": goldenBatch(t), "headers": fuzzSeeds(t)["headers"]}
	for name, b := range batches {
		t.Run(name, func(t *testing.T) {
			// Magic, CRC and everything the CRC covers.
			for i := 16; i < len(b); i++ {
				for x := 1; x < 256; x++ {
					b[i] ^= byte(x)
					_, err := log.CheckBatch(b)
					require.ErrorIs(t, err, log.ErrCorrupt, "byte %d ^ %#x", i, x)
					b[i] ^= byte(x)
				}
			}
			_, err := log.Validate(b)
			require.NoError(t, err)
		})
	}
}

func TestCompressedBatches(t *testing.T) {
	for _, c := range []log.Compression{log.Gzip, log.Snappy, log.LZ4, log.Zstd} {
		t.Run(c.String(), func(t *testing.T) {
			b := goldenBatch(t)
			b[22] |= byte(c)
			fixCRC(b)
			h, err := log.ReadHeader(b)
			require.NoError(t, err, "headers of compressed batches can be scanned")
			require.Equal(t, c, h.Compression())
			_, err = log.CheckBatch(b)
			require.NoError(t, err, "a compressed batch with a matching CRC is valid data")
			// Reading its records needs a Decoder.
			_, err = log.Validate(b)
			require.ErrorIs(t, err, log.ErrUnsupportedCompression)
			require.EqualError(t, err, "log: batch compressed with "+c.String()+": unsupported compression")
			_, err = log.NewRecordIter(b)
			require.ErrorIs(t, err, log.ErrUnsupportedCompression)
			var d log.Decoder
			_, err = d.Validate(b)
			require.ErrorIs(t, err, log.ErrCorrupt, "the golden records are not a %s stream", c)
		})
	}
}

func TestReadHeaderRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(b []byte)
	}{
		{"magic 3", func(b []byte) { b[16] = 3 }},
		{"magic 1 too short for its header", func(b []byte) { b[16] = 1; binary.BigEndian.PutUint32(b[8:], 21) }},
		{"length below header", func(b []byte) { binary.BigEndian.PutUint32(b[8:], 48) }},
		{"length negative", func(b []byte) { binary.BigEndian.PutUint32(b[8:], 0xffffff00) }},
		{"length too large", func(b []byte) { binary.BigEndian.PutUint32(b[8:], math.MaxInt32) }},
		{"negative last offset delta", func(b []byte) { binary.BigEndian.PutUint32(b[23:], 0xffffffff) }},
		{"negative record count", func(b []byte) { binary.BigEndian.PutUint32(b[57:], 0xffffffff) }},
		{"more records than offsets", func(b []byte) { binary.BigEndian.PutUint32(b[57:], 3) }},
		{"more records than bytes", func(b []byte) {
			binary.BigEndian.PutUint32(b[23:], 1000)
			binary.BigEndian.PutUint32(b[57:], 1000)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := goldenBatch(t)
			tt.mutate(b)
			fixCRC(b)
			_, err := log.ReadHeader(b)
			require.ErrorIs(t, err, log.ErrCorrupt)
			_, err = log.Validate(b)
			require.ErrorIs(t, err, log.ErrCorrupt)
		})
	}
}

func TestRecordRejects(t *testing.T) {
	// A valid record body: attributes, ts delta 0, offset delta 0, key "a",
	// value "b", no headers.
	const ok = "00 00 00 02 61 02 62 00"
	const long = "00 00 00 10 61 61 61 61 61 61 61 61 02 62 00" // big enough for two
	tests := []struct {
		name       string
		batch      func(t testing.TB) []byte
		wantErr    error // nil: valid
		wantRecord int   // records read before the error
	}{
		{"valid", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, ok)) }, nil, 1},
		{"valid with null header value", func(t testing.TB) []byte {
			return rawBatch(0, 1, rec(t, "00 00 00 01 01 02 02 6b 01"))
		}, nil, 1},
		{"record attributes", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "01 00 00 02 61 02 62 00")) }, log.ErrCorrupt, 0},
		{"padded timestamp delta", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 80 00 00 01 01 00")) }, log.ErrCorrupt, 0},
		{"padded offset delta", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 00 80 00 01 01 00")) }, log.ErrCorrupt, 0},
		{"negative offset delta", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 00 01 01 01 00")) }, log.ErrCorrupt, 0},
		{"offset delta past last", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 00 02 01 01 00")) }, log.ErrCorrupt, 0},
		{"offset deltas repeat", func(t testing.TB) []byte { return rawBatch(1, 2, rec(t, ok), rec(t, ok)) }, log.ErrCorrupt, 1},
		{"key length -2", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 00 00 03 01 00")) }, log.ErrCorrupt, 0},
		{"key longer than record", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 00 00 10 61 02 62 00")) }, log.ErrCorrupt, 0},
		{"value length -3", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 00 00 01 05 00")) }, log.ErrCorrupt, 0},
		{"value longer than record", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 00 00 01 04 62 00")) }, log.ErrCorrupt, 0},
		{"header count -1", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 00 00 01 01 01")) }, log.ErrCorrupt, 0},
		{"header count past record", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 00 00 01 01 e8 07 00 00")) }, log.ErrCorrupt, 0},
		{"header count max", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 00 00 01 01 fe ff ff ff 0f")) }, log.ErrCorrupt, 0},
		{"null header key", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 00 00 01 01 02 01 01")) }, log.ErrCorrupt, 0},
		{"header key length -2", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 00 00 01 01 02 03 01")) }, log.ErrCorrupt, 0},
		{"header value past record", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, "00 00 00 01 01 02 00 08 00")) }, log.ErrCorrupt, 0},
		{"bytes left in record", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, ok+" 00")) }, log.ErrCorrupt, 0},
		{"record length below minimum", func(t testing.TB) []byte {
			return rawBatch(0, 1, unhex(t, "0a 00 00 00 01 01"), unhex(t, "00"))
		}, log.ErrCorrupt, 0},
		{"record length past batch", func(t testing.TB) []byte { return rawBatch(0, 1, unhex(t, "12 "+ok)) }, log.ErrCorrupt, 0},
		{"record length short", func(t testing.TB) []byte { return rawBatch(0, 1, unhex(t, "0e "+ok)) }, log.ErrCorrupt, 0},
		{"record length padded", func(t testing.TB) []byte { return rawBatch(0, 1, unhex(t, "90 00 "+ok)) }, log.ErrCorrupt, 0},
		{"bytes after last record", func(t testing.TB) []byte { return rawBatch(0, 1, rec(t, ok), unhex(t, "00 00 00 00 00 00 00")) }, log.ErrCorrupt, 1},
		{"fewer records than count", func(t testing.TB) []byte { return rawBatch(1, 2, rec(t, long)) }, log.ErrCorrupt, 1},
		{"more records than count", func(t testing.TB) []byte {
			return rawBatch(1, 1, rec(t, ok), rec(t, "00 00 02 01 01 00"))
		}, log.ErrCorrupt, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.batch(t)
			_, err := log.CheckBatch(b)
			require.NoError(t, err, "CheckBatch does not parse records")
			_, err = log.Validate(b)
			if tt.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tt.wantErr)
			}
			it, err := log.NewRecordIter(b)
			require.NoError(t, err)
			var r log.Record
			n := 0
			for it.Next(&r) {
				n++
			}
			require.Equal(t, tt.wantRecord, n)
			if tt.wantErr == nil {
				require.NoError(t, it.Err())
			} else {
				require.ErrorIs(t, it.Err(), tt.wantErr)
				require.False(t, it.Next(&r), "the error sticks")
			}
		})
	}
}

func TestEncodeRejects(t *testing.T) {
	h := log.BatchHeader{BaseOffset: 10, LastOffsetDelta: 4}
	tests := []struct {
		name    string
		h       log.BatchHeader
		offsets []int64
		wantErr error
	}{
		{"offset before base", h, []int64{9}, log.ErrInvalidBatch},
		{"offset past last", h, []int64{10, 15}, log.ErrInvalidBatch},
		{"offsets repeat", h, []int64{11, 11}, log.ErrInvalidBatch},
		{"offsets decrease", h, []int64{12, 11}, log.ErrInvalidBatch},
		{"offset far past last", h, []int64{10, 1 << 40}, log.ErrInvalidBatch},
		{"negative last offset delta", log.BatchHeader{LastOffsetDelta: -1}, nil, log.ErrInvalidBatch},
		{"unknown codec", log.BatchHeader{Attributes: 5}, []int64{0}, log.ErrUnsupportedCompression},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := make([]log.Record, len(tt.offsets))
			for i, off := range tt.offsets {
				recs[i].Offset = off
			}
			dst := []byte("dst")
			out, err := log.EncodeBatchWithHeader(dst, tt.h, recs)
			require.ErrorIs(t, err, tt.wantErr)
			require.Equal(t, dst, out)
		})
	}

	_, err := log.EncodeBatch(nil, nil, log.BatchOptions{})
	require.ErrorIs(t, err, log.ErrEmptyBatch)
	_, err = log.EncodeBatch(nil, []log.Record{{}}, log.BatchOptions{TimestampType: 2})
	require.ErrorIs(t, err, log.ErrInvalidBatch)
}

func TestRecordsYieldsErrorLast(t *testing.T) {
	tests := []struct {
		name    string
		batch   []byte
		records int
		wantErr error
	}{
		{"incomplete", goldenBatch(t)[:90], 0, log.ErrIncomplete},
		{"second record corrupt", rawBatch(1, 2, rec(t, "00 00 00 01 01 00"), rec(t, "00 00 00 01 01 00")), 1, log.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n int
			var errs []error
			for _, err := range log.Records(tt.batch) {
				if err != nil {
					errs = append(errs, err)
				} else {
					require.Empty(t, errs, "no record after the error")
					n++
				}
			}
			require.Equal(t, tt.records, n)
			require.Len(t, errs, 1)
			require.ErrorIs(t, errs[0], tt.wantErr)
		})
	}

	// Breaking out of the loop early is fine.
	for range log.Records(goldenBatch(t)) {
		break
	}
}
