package log_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stratalog/strata/log"
	"github.com/stretchr/testify/require"
)

func TestVarintVectors(t *testing.T) {
	// Zig-zag varints as Kafka's ByteUtils.writeVarint writes them
	// (clients/src/main/java/org/apache/kafka/common/utils/ByteUtils.java).
	tests := []struct {
		name string
		v    int32
		enc  string
	}{
		{"zero", 0, "00"},
		{"minus one", -1, "01"},
		{"one", 1, "02"},
		{"minus two", -2, "03"},
		{"63", 63, "7e"},
		{"minus 64", -64, "7f"},
		{"64", 64, "80 01"},
		{"300", 300, "d8 04"},
		{"int32 max", math.MaxInt32, "fe ff ff ff 0f"},
		{"int32 min", math.MinInt32, "ff ff ff ff 0f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := unhex(t, tt.enc)
			require.Equal(t, want, log.AppendVarint(nil, tt.v))
			require.Equal(t, len(want), log.SizeVarint(tt.v))
			v, n, err := log.ReadVarint(append(want, 0x55)) // a byte after it is not read
			require.NoError(t, err)
			require.Equal(t, tt.v, v)
			require.Equal(t, len(want), n)

			// A varlong of a value that fits 32 bits encodes the same.
			require.Equal(t, want, log.AppendVarlong(nil, int64(tt.v)))
			require.Equal(t, len(want), log.SizeVarlong(int64(tt.v)))
			vl, n, err := log.ReadVarlong(want)
			require.NoError(t, err)
			require.Equal(t, int64(tt.v), vl)
			require.Equal(t, len(want), n)
		})
	}
}

func TestVarlongEdges(t *testing.T) {
	tests := []struct {
		name string
		v    int64
		enc  string
	}{
		{"int32 max + 1", math.MaxInt32 + 1, "80 80 80 80 10"},
		{"int32 min - 1", math.MinInt32 - 1, "81 80 80 80 10"},
		{"1 << 62", 1 << 62, "80 80 80 80 80 80 80 80 80 01"},
		{"int64 max", math.MaxInt64, "fe ff ff ff ff ff ff ff ff 01"},
		{"int64 min", math.MinInt64, "ff ff ff ff ff ff ff ff ff 01"},
		{"golden ts delta", -282609, "e1 bf 22"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := unhex(t, tt.enc)
			require.Equal(t, want, log.AppendVarlong(nil, tt.v))
			require.Equal(t, binary.AppendVarint(nil, tt.v), want, "same zig-zag as encoding/binary")
			require.Equal(t, len(want), log.SizeVarlong(tt.v))
			v, n, err := log.ReadVarlong(want)
			require.NoError(t, err)
			require.Equal(t, tt.v, v)
			require.Equal(t, len(want), n)
		})
	}
}

func TestVarintRoundTrip(t *testing.T) {
	for shift := range 64 {
		for _, v := range []int64{1 << shift, -1 << shift, 1<<shift - 1, -(1<<shift - 1), 1<<shift + 1} {
			b := log.AppendVarlong(nil, v)
			got, n, err := log.ReadVarlong(b)
			require.NoError(t, err)
			require.Equal(t, v, got)
			require.Equal(t, len(b), n)
			require.Equal(t, len(b), log.SizeVarlong(v))
			if v32 := int32(v); int64(v32) == v {
				b := log.AppendVarint(nil, v32)
				got, n, err := log.ReadVarint(b)
				require.NoError(t, err)
				require.Equal(t, v32, got)
				require.Equal(t, len(b), n)
			}
		}
	}
}

func TestVarintRejects(t *testing.T) {
	tests := []struct {
		name    string
		enc     string
		long    bool // read as a varlong
		wantErr error
	}{
		{"varint empty", "", false, log.ErrIncomplete},
		{"varint truncated", "80", false, log.ErrIncomplete},
		{"varint truncated at 4", "ff ff ff ff", false, log.ErrIncomplete},
		{"varint padded zero", "80 00", false, log.ErrCorrupt},
		{"varint padded one", "82 80 00", false, log.ErrCorrupt},
		{"varint padded to 5", "80 80 80 80 00", false, log.ErrCorrupt},
		{"varint over 32 bits", "ff ff ff ff 1f", false, log.ErrCorrupt},
		{"varint 6 bytes", "ff ff ff ff ff 01", false, log.ErrCorrupt},
		{"varlong empty", "", true, log.ErrIncomplete},
		{"varlong truncated at 9", "ff ff ff ff ff ff ff ff ff", true, log.ErrIncomplete},
		{"varlong padded zero", "80 00", true, log.ErrCorrupt},
		{"varlong padded to 10", "80 80 80 80 80 80 80 80 80 00", true, log.ErrCorrupt},
		{"varlong over 64 bits", "ff ff ff ff ff ff ff ff ff 02", true, log.ErrCorrupt},
		{"varlong 11 bytes", "ff ff ff ff ff ff ff ff ff ff 01", true, log.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := unhex(t, tt.enc)
			var err error
			if tt.long {
				_, _, err = log.ReadVarlong(b)
			} else {
				_, _, err = log.ReadVarint(b)
			}
			require.ErrorIs(t, err, tt.wantErr)
		})
	}
}

func TestWorkedRecord(t *testing.T) {
	// A record with offsetDelta 0, timestampDelta 0, key "key", value "value"
	// and no headers, laid out as in the javadoc of Kafka's DefaultRecord.java:
	// length 14, attributes, the two deltas, key and value each after its
	// length, and a header count of 0.
	b, err := log.EncodeBatch(nil, []log.Record{{Key: []byte("key"), Value: []byte("value")}},
		log.BatchOptions{Now: 1000})
	require.NoError(t, err)
	require.Equal(t, unhex(t, "1c 00 00 00 06 6b 65 79 0a 76 61 6c 75 65 00"), b[log.BatchHeaderSize:])
}

// TestRecordLength reads record length prefixes of one, two and three bytes,
// and refuses a body shorter than the smallest record, longer than what
// follows, or a malformed varint, with ErrCorrupt.
func TestRecordLength(t *testing.T) {
	body := func(length int, rest int) []byte {
		return append(log.AppendVarint(nil, int32(length)), make([]byte, rest)...)
	}
	for _, length := range []int{6, 63, 64, 100, 8191, 8192, 100_000} {
		b := body(length, length)
		n, got, err := log.RecordLength(b)
		require.NoError(t, err, "length %d", length)
		require.Equal(t, length, got)
		require.Equal(t, len(b)-length, n, "the prefix of length %d", length)
	}
	for name, b := range map[string][]byte{
		"body too short":      body(5, 5),
		"negative":            body(-1, 10),
		"past the end":        body(100, 99),
		"empty":               nil,
		"padded varint":       {0x80, 0x00, 0, 0, 0, 0, 0, 0},
		"varint past the end": {0x80},
	} {
		_, _, err := log.RecordLength(b)
		require.ErrorIs(t, err, log.ErrCorrupt, name)
	}
}
