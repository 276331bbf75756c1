package txn

import (
	"encoding/binary"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGoldenValue checks the bytes of a version 0 key and value against
// the layout of Kafka's TransactionLogKey and TransactionLogValue,
// written out field by field.
func TestGoldenValue(t *testing.T) {
	m := Metadata{
		ProducerID: 7, ProducerEpoch: 3, Timeout: time.Minute, State: Ongoing,
		Partitions: []Partition{{"a", 0}, {"a", 2}, {"bc", 1}},
		LastUpdate: time.UnixMilli(1700000000123), Start: time.UnixMilli(1700000000000),
	}
	want := "0000" + // version
		"0000000000000007" + // producer id
		"0003" + // epoch
		"0000ea60" + // 60000 ms
		"01" + // Ongoing
		"00000002" + // two topics
		"000161" + "00000002" + "00000000" + "00000002" + // "a": [0, 2]
		"00026263" + "00000001" + "00000001" + // "bc": [1]
		"0000018bcfe5687b" + // last update
		"0000018bcfe56800" // start
	require.Equal(t, want, hex.EncodeToString(AppendValue(nil, m)))
	require.Equal(t, "0000"+"0003"+"747831", hex.EncodeToString(AppendKey(nil, "tx1")))

	id, got, deleted, err := Decode(AppendKey(nil, "tx1"), AppendValue(nil, m))
	require.NoError(t, err)
	require.False(t, deleted)
	require.Equal(t, "tx1", id)
	require.Equal(t, m.Partitions, got.Partitions)
	require.Equal(t, m.LastUpdate.UnixMilli(), got.LastUpdate.UnixMilli())
	require.Equal(t, int64(-1), got.PreviousProducerID)
}

func TestEmptyHasNullPartitions(t *testing.T) {
	v := AppendValue(nil, Metadata{ProducerID: 1, State: Empty, Partitions: []Partition{{"x", 0}}})
	require.Equal(t, "ffffffff", hex.EncodeToString(v[2+8+2+4+1:][:4]))
	_, m, _, err := Decode(AppendKey(nil, "id"), v)
	require.NoError(t, err)
	require.Nil(t, m.Partitions)
}

func TestRoundTrip(t *testing.T) {
	for s := Empty; s <= PrepareEpochFence; s++ {
		t.Run(s.String(), func(t *testing.T) {
			m := Metadata{ProducerID: 1 << 40, ProducerEpoch: 32000, Timeout: 15 * time.Minute, State: s,
				Partitions: []Partition{{"t", 9}}, LastUpdate: time.UnixMilli(5).UTC(), Start: time.UnixMilli(4).UTC(),
				PreviousProducerID: -1, NextProducerID: -1}
			if s == Empty {
				m.Partitions = nil
			}
			id, got, _, err := Decode(AppendKey(nil, "x"), AppendValue(nil, m))
			require.NoError(t, err)
			require.Equal(t, "x", id)
			require.Equal(t, m, got)
		})
	}
}

// TestDecodeVersion1 decodes a flexible (version 1) value, as Kafka
// writes it with transaction version 2: compact strings and arrays,
// tagged fields after each topic and at the end.
func TestDecodeVersion1(t *testing.T) {
	v := []byte{0, 1}
	v = binary.BigEndian.AppendUint64(v, 42)
	v = binary.BigEndian.AppendUint16(v, 5)
	v = binary.BigEndian.AppendUint32(v, 30000)
	v = append(v, byte(PrepareCommit))
	v = append(v, 2)           // one topic
	v = append(v, 3, 'o', 'k') // compact "ok"
	v = append(v, 3)           // two partitions
	v = binary.BigEndian.AppendUint32(v, 4)
	v = binary.BigEndian.AppendUint32(v, 1)
	v = append(v, 0) // the topic's tagged fields
	v = binary.BigEndian.AppendUint64(v, 10)
	v = binary.BigEndian.AppendUint64(v, 9)
	v = append(v, 3)    // three tagged fields
	v = append(v, 0, 8) // PreviousProducerId
	v = binary.BigEndian.AppendUint64(v, 41)
	v = append(v, 2, 2, 0, 2) // ClientTransactionVersion: skipped
	v = append(v, 1, 8)       // NextProducerId
	v = binary.BigEndian.AppendUint64(v, 43)
	_, m, _, err := Decode(AppendKey(nil, "id"), v)
	require.NoError(t, err)
	require.Equal(t, Metadata{ProducerID: 42, ProducerEpoch: 5, Timeout: 30 * time.Second, State: PrepareCommit,
		Partitions: []Partition{{"ok", 1}, {"ok", 4}}, LastUpdate: time.UnixMilli(10).UTC(), Start: time.UnixMilli(9).UTC(),
		PreviousProducerID: 41, NextProducerID: 43}, m)
}

func TestDecodeBad(t *testing.T) {
	good := AppendValue(nil, Metadata{ProducerID: 1, State: Ongoing, Partitions: []Partition{{"t", 0}}})
	key := AppendKey(nil, "id")
	for _, tc := range []struct {
		name       string
		key, value []byte
		want       error
	}{
		{"short key", []byte{0}, good, ErrBadRecord},
		{"other key type", []byte{0, 1, 0, 0}, good, ErrNotTxnRecord},
		{"negative key type", []byte{0xff, 0xff}, good, ErrBadRecord},
		{"key trailing bytes", append(AppendKey(nil, "id"), 0), good, ErrBadRecord},
		{"empty value", key, []byte{}, ErrBadRecord},
		{"value version 2", key, append([]byte{0, 2}, good[2:]...), ErrBadRecord},
		{"truncated value", key, good[:len(good)-1], ErrBadRecord},
		{"trailing bytes", key, append(good, 0), ErrBadRecord},
		{"unknown status", key, func() []byte { v := append([]byte{}, good...); v[16] = 9; return v }(), ErrBadRecord},
		{"negative producer id", key, AppendValue(nil, Metadata{ProducerID: -1, State: Ongoing}), ErrBadRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := Decode(tc.key, tc.value)
			require.ErrorIs(t, err, tc.want)
		})
	}
	id, _, deleted, err := Decode(key, nil)
	require.NoError(t, err)
	require.True(t, deleted)
	require.Equal(t, "id", id)
}

func TestCanFollow(t *testing.T) {
	require.True(t, Ongoing.CanFollow(Empty))
	require.True(t, PrepareCommit.CanFollow(Ongoing))
	require.False(t, PrepareCommit.CanFollow(Empty))
	require.True(t, CompleteCommit.CanFollow(PrepareCommit))
	require.False(t, CompleteCommit.CanFollow(PrepareAbort))
	require.True(t, PrepareAbort.CanFollow(CompleteCommit))
	require.False(t, Dead.CanFollow(Ongoing))
	require.False(t, State(9).CanFollow(Empty))
	require.Equal(t, "State(9)", State(9).String())
	require.True(t, PrepareAbort.Open())
	require.False(t, CompleteAbort.Open())
}

func FuzzDecode(f *testing.F) {
	f.Add(AppendKey(nil, "id"), AppendValue(nil, Metadata{ProducerID: 1, State: Ongoing, Partitions: []Partition{{"t", 0}}}))
	f.Add(AppendKey(nil, ""), []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		id, m, deleted, err := Decode(key, value)
		if err != nil || deleted {
			return
		}
		// What decodes re-encodes (as version 0) to what decodes the same.
		id2, m2, _, err := Decode(AppendKey(nil, id), AppendValue(nil, m))
		require.NoError(t, err)
		require.Equal(t, id, id2)
		m.PreviousProducerID, m.NextProducerID = -1, -1
		m.Timeout = m.Timeout.Truncate(time.Millisecond)
		require.Equal(t, m, m2)
	})
}
