package log_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// TestNewRecordIterAt starts an iterator at every record of a batch, found
// by its length prefixes: it reads what an iterator from the first record
// reads from there on. Points no record can start at are ErrCorrupt, and a
// batch whose records do not fill it is still caught at its end.
func TestNewRecordIterAt(t *testing.T) {
	recs := someRecords(20, 30)
	batch, err := log.EncodeBatch(nil, recs, log.BatchOptions{BaseOffset: 100, Now: 1})
	require.NoError(t, err)
	h, err := log.ReadHeader(batch)
	require.NoError(t, err)
	var all []log.Record
	for r, err := range log.Records(batch) {
		require.NoError(t, err)
		all = append(all, r)
	}
	pos := log.BatchHeaderSize
	for k := range len(all) + 1 {
		it, err := log.NewRecordIterAt(batch, h, pos, int32(k), int64(k)-1)
		require.NoError(t, err, "record %d", k)
		var r log.Record
		for j := k; j < len(all); j++ {
			require.True(t, it.Next(&r), "record %d from %d: %v", j, k, it.Err())
			require.Equal(t, all[j].Offset, r.Offset)
			require.Equal(t, all[j].Key, r.Key)
			require.Equal(t, all[j].Value, r.Value)
		}
		require.False(t, it.Next(&r))
		require.NoError(t, it.Err())
		if k < len(all) {
			n, length, err := log.RecordLength(batch[pos:])
			require.NoError(t, err)
			pos += n + length
		}
	}

	for _, c := range []struct {
		pos  int
		read int32
		prev int64
	}{
		{log.BatchHeaderSize - 1, 0, -1},
		{len(batch) + 1, 20, 19},
		{log.BatchHeaderSize, 1, 0}, // a record read, none stepped over
		{log.BatchHeaderSize + 10, 0, -1},
		{log.BatchHeaderSize + 10, 1, -1},
		{log.BatchHeaderSize + 10, 21, 0},
		{log.BatchHeaderSize + 10, 1, 20},
	} {
		_, err := log.NewRecordIterAt(batch, h, c.pos, c.read, c.prev)
		require.ErrorIs(t, err, log.ErrCorrupt, "%+v", c)
	}

	// Told 18 records were stepped over to reach the end of a batch of 20:
	// the two missing are found at the end.
	it, err := log.NewRecordIterAt(batch, h, len(batch), 18, 17)
	require.NoError(t, err)
	var r log.Record
	require.False(t, it.Next(&r))
	require.ErrorIs(t, it.Err(), log.ErrCorrupt)
}

// TestPeekHeader agrees with ReadHeader on a good header and refuses what
// cannot be one.
func TestPeekHeader(t *testing.T) {
	batch, err := log.EncodeBatch(nil, someRecords(5, 10), log.BatchOptions{BaseOffset: 40, Now: 1})
	require.NoError(t, err)
	h, err := log.ReadHeader(batch)
	require.NoError(t, err)
	base, last, size, ok := log.PeekHeader(batch)
	require.True(t, ok)
	require.Equal(t, h.BaseOffset, base)
	require.Equal(t, h.LastOffset(), last)
	require.Equal(t, int64(h.Size()), size)

	for name, damage := range map[string]func(b []byte) []byte{
		"short":          func(b []byte) []byte { return b[:log.BatchHeaderSize-1] },
		"magic":          func(b []byte) []byte { b[16] = 3; return b },
		"length":         func(b []byte) []byte { b[8], b[9], b[10], b[11] = 0, 0, 0, 48; return b },
		"negative delta": func(b []byte) []byte { b[23] = 0x80; return b },
	} {
		_, _, _, ok := log.PeekHeader(damage(bytes.Clone(batch)))
		require.False(t, ok, name)
	}
}
