package group

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// unhex decodes hex written with spaces.
func unhex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// The golden record of the package documentation, computed by hand from
// the layout: group "g", topic "t", partition 3, offset 42, metadata "m",
// committed at 1700000000000 ms = 0x0000018bcfe56800.
var (
	goldenKey    = unhex("0001 0001 67 0001 74 00000003")
	goldenValue  = unhex("0003 000000000000002a ffffffff 0001 6d 0000018bcfe56800")
	goldenCommit = Commit{Group: "g", Topic: "t", Partition: 3, Offset: 42, Metadata: "m",
		CommitTime: time.UnixMilli(1_700_000_000_000).UTC()}
)

func TestRecordGolden(t *testing.T) {
	require.Equal(t, goldenKey, AppendKey(nil, "g", "t", 3))
	require.Equal(t, goldenValue, AppendValue(nil, goldenCommit.OffsetAndMetadata()))
	key, value := EncodeCommit(goldenCommit)
	require.Equal(t, goldenKey, key)
	require.Equal(t, goldenValue, value)

	c, err := DecodeCommit(goldenKey, goldenValue)
	require.NoError(t, err)
	require.Equal(t, goldenCommit, c)
}

func TestRecordRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		c    Commit
	}{
		{"golden", goldenCommit},
		{"empty metadata", Commit{Group: "orders-service", Topic: "orders", Partition: 0, Offset: 0, CommitTime: epoch}},
		{"unicode", Commit{Group: "grüppe", Topic: "tópico", Partition: 7, Offset: 1 << 40, Metadata: "λ→∞", CommitTime: epoch}},
		{"largest", Commit{Group: strings.Repeat("g", maxStringLen), Topic: strings.Repeat("t", 249), Partition: 1<<31 - 1,
			Offset: 1<<63 - 1, Metadata: strings.Repeat("m", maxStringLen), CommitTime: epoch}},
		{"before 1970", Commit{Group: "g", Topic: "t", Offset: 1, CommitTime: time.UnixMilli(-5).UTC()}},
		{"tombstone", Commit{Group: "g", Topic: "t", Partition: 3, Deleted: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, value := EncodeCommit(tt.c)
			require.Equal(t, tt.c.Deleted, value == nil)
			got, err := DecodeCommit(key, value)
			require.NoError(t, err)
			require.Equal(t, tt.c, got)
		})
	}
}

// TestDecodeOlderVersions reads the value versions Kafka wrote before 3,
// and the flexible version 4, built by hand.
func TestDecodeOlderVersions(t *testing.T) {
	want := goldenCommit
	tests := []struct {
		name  string
		key   string
		value string
	}{
		{"key v0 value v0", "0000 0001 67 0001 74 00000003", "0000 000000000000002a 0001 6d 0000018bcfe56800"},
		{"value v1 with expire timestamp", "0001 0001 67 0001 74 00000003",
			"0001 000000000000002a 0001 6d 0000018bcfe56800 ffffffffffffffff"},
		{"value v2", "0001 0001 67 0001 74 00000003", "0002 000000000000002a 0001 6d 0000018bcfe56800"},
		{"value v4 no tagged fields", "0001 0001 67 0001 74 00000003",
			"0004 000000000000002a 00000005 02 6d 0000018bcfe56800 00"},
		{"value v4 with a tagged field", "0001 0001 67 0001 74 00000003",
			"0004 000000000000002a 00000005 02 6d 0000018bcfe56800 01 07 02 abcd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeCommit(unhex(tt.key), unhex(tt.value))
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name       string
		key, value []byte
		want       error
	}{
		{"empty key", []byte{}, goldenValue, ErrBadRecord},
		{"nil key", nil, goldenValue, ErrBadRecord},
		{"key trailing byte", append(unhex("0001 0001 67 0001 74 00000003"), 0), goldenValue, ErrBadRecord},
		{"key negative string length", unhex("0001 ffff 0001 74 00000003"), goldenValue, ErrBadRecord},
		{"key string past the end", unhex("0001 0009 67 0001 74 00000003"), goldenValue, ErrBadRecord},
		{"key negative partition", unhex("0001 0001 67 0001 74 ffffffff"), goldenValue, ErrBadRecord},
		{"key negative version", unhex("ffff 0001 67 0001 74 00000003"), goldenValue, ErrBadRecord},
		{"group metadata key", unhex("0002 0001 67"), []byte{1, 2, 3}, ErrNotOffsetCommit},
		{"KIP-848 key", unhex("0003 0001 67"), nil, ErrNotOffsetCommit},
		{"empty value", goldenKey, []byte{}, ErrBadRecord},
		{"value version 5", goldenKey, unhex("0005 000000000000002a ffffffff 0001 6d 0000018bcfe56800"), ErrBadRecord},
		{"value negative version", goldenKey, unhex("ffff 000000000000002a ffffffff 0001 6d 0000018bcfe56800"), ErrBadRecord},
		{"value trailing byte", goldenKey, append(unhex("0003 000000000000002a ffffffff 0001 6d 0000018bcfe56800"), 0), ErrBadRecord},
		{"value null metadata", goldenKey, unhex("0003 000000000000002a ffffffff ffff 0000018bcfe56800"), ErrBadRecord},
		{"v4 null compact string", goldenKey, unhex("0004 000000000000002a 00000005 00 0000018bcfe56800 00"), ErrBadRecord},
		{"v4 huge varint", goldenKey, unhex("0004 000000000000002a 00000005 ffffffffff0f 0000018bcfe56800 00"), ErrBadRecord},
		{"v4 tagged field past the end", goldenKey, unhex("0004 000000000000002a 00000005 02 6d 0000018bcfe56800 01 07 09 ab"), ErrBadRecord},
		{"v4 missing tagged fields", goldenKey, unhex("0004 000000000000002a 00000005 02 6d 0000018bcfe56800"), ErrBadRecord},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeCommit(tt.key, tt.value)
			require.ErrorIs(t, err, tt.want)
		})
	}
}

// TestDecodeTruncations cuts the golden key and value at every length.
func TestDecodeTruncations(t *testing.T) {
	for n := range len(goldenKey) {
		_, err := DecodeCommit(goldenKey[:n], goldenValue)
		require.ErrorIs(t, err, ErrBadRecord, "key cut to %d bytes", n)
		_, err = DecodeCommit(goldenKey[:n], nil)
		require.ErrorIs(t, err, ErrBadRecord, "tombstone key cut to %d bytes", n)
	}
	for n := range len(goldenValue) {
		_, err := DecodeCommit(goldenKey, goldenValue[:n])
		require.ErrorIs(t, err, ErrBadRecord, "value cut to %d bytes", n)
	}
}

func TestEncodePanicsOnOverlongStrings(t *testing.T) {
	long := strings.Repeat("x", maxStringLen+1)
	require.Panics(t, func() { AppendKey(nil, long, "t", 0) })
	require.Panics(t, func() { AppendKey(nil, "g", long, 0) })
	require.Panics(t, func() { AppendKey(nil, "g", "t", -1) })
	require.Panics(t, func() { AppendValue(nil, OffsetAndMetadata{Metadata: long}) })
}

// FuzzDecodeCommit checks that DecodeCommit never panics, and that what it
// accepts re-encodes to a record that decodes to the same commit.
func FuzzDecodeCommit(f *testing.F) {
	f.Add(goldenKey, goldenValue, false)
	f.Add(goldenKey, []byte(nil), true)
	f.Add(unhex("0000 0001 67 0001 74 00000003"), unhex("0001 000000000000002a 0001 6d 0000018bcfe56800 ffffffffffffffff"), false)
	f.Add(goldenKey, unhex("0004 000000000000002a 00000005 02 6d 0000018bcfe56800 01 07 02 abcd"), false)
	f.Add(unhex("0002 0001 67"), []byte{0}, false)
	f.Fuzz(func(t *testing.T, key, value []byte, tombstone bool) {
		if tombstone {
			value = nil
		} else if value == nil {
			value = []byte{}
		}
		c, err := DecodeCommit(key, value)
		if err != nil {
			require.Equal(t, Commit{}, c)
			return
		}
		k2, v2 := EncodeCommit(c)
		c2, err := DecodeCommit(k2, v2)
		require.NoError(t, err)
		require.Equal(t, c, c2)
	})
}
