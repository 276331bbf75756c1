package partition

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// appendBatches appends records rec(id) for ids from, from+1, ... in batches
// of random sizes (1 to maxBatch records) until offset to.
func appendBatches(t testing.TB, p *Partition, seed, from, to, maxBatch int) {
	t.Helper()
	r := newRand(seed)
	for id := from; id < to; {
		n := min(to-id, 1+r.IntN(maxBatch))
		recs := make([]log.Record, n)
		for i := range recs {
			recs[i] = rec(id + i)
		}
		base, err := p.Append(recs)
		require.NoError(t, err)
		require.Equal(t, int64(id), base)
		id += n
	}
}

func TestReaderLookups(t *testing.T) {
	clock := newClock()
	p, _ := memPartition(t, small(clock))
	defer p.Close()
	const n = 600
	appendBatches(t, p, 1, 0, n, 12)
	require.Greater(t, len(p.Segments()), 5, "lookups cross segments")

	r := p.NewReader(0)
	defer r.Close()
	var x log.Record
	rnd := newRand(2)
	for range 2000 {
		off := rnd.Int64N(n)
		r.SetOffset(off)
		// A lookup, then a few records on: across batch and segment ends.
		for i := range int64(rnd.IntN(4)) {
			ok, err := r.Next(&x)
			require.NoError(t, err)
			if off+i >= n {
				require.False(t, ok)
				break
			}
			require.True(t, ok)
			want := rec(int(off + i))
			require.Equal(t, off+i, x.Offset)
			require.Equal(t, want.Key, x.Key, "offset %d", x.Offset)
			require.Equal(t, want.Value, x.Value, "offset %d", x.Offset)
			require.Equal(t, clock.Now().UnixMilli(), x.Timestamp.UnixMilli())
			require.Equal(t, off+i+1, r.Offset())
		}
	}
}

// TestReaderLookupsInLargeBatches looks up every offset of batches of 60 to
// 100 records (about 3 to 6 KiB), twice: first walking each batch (and the
// segment learning where the records of those over 4 KiB start), then from
// the positions the segment remembers.
func TestReaderLookupsInLargeBatches(t *testing.T) {
	clock := newClock()
	cfg := small(clock)
	cfg.SegmentBytes, cfg.MaxBatchBytes = 64<<10, 16<<10
	p, _ := memPartition(t, cfg)
	defer p.Close()
	const n = 2000
	for id := 0; id < n; {
		recs := make([]log.Record, min(n-id, 60+id%41))
		for i := range recs {
			recs[i] = rec(id + i)
		}
		_, err := p.Append(recs)
		require.NoError(t, err)
		id += len(recs)
	}
	r := p.NewReader(0)
	defer r.Close()
	var x log.Record
	for round := range 2 {
		for _, off := range newRand(round).Perm(n) {
			r.SetOffset(int64(off))
			ok, err := r.Next(&x)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, int64(off), x.Offset)
			require.Equal(t, rec(off).Value, x.Value, "offset %d, round %d", off, round)
		}
	}
}

func TestReaderLookupWithHeaders(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	var recs []log.Record
	for i := range 10 {
		x := rec(i)
		x.Headers = []log.Header{{Key: "h", Value: []byte{byte(i)}}, {Key: "n", Value: nil}}
		recs = append(recs, x)
	}
	_, err := p.Append(recs)
	require.NoError(t, err)
	r := p.NewReader(0)
	defer r.Close()
	for _, off := range []int64{7, 3, 9, 0, 5} {
		r.SetOffset(off)
		var x log.Record
		for i := off; i < 10; i++ {
			ok, err := r.Next(&x)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, i, x.Offset)
			require.Equal(t, recs[i].Value, x.Value)
			require.Equal(t, recs[i].Headers, x.Headers)
		}
		ok, err := r.Next(&x)
		require.NoError(t, err)
		require.False(t, ok)
	}
}

func TestReaderLookupsCompacted(t *testing.T) {
	p, _, clock := compactedPartition(t)
	defer p.Close()
	writeKVs(t, p, newRand(3), 400)
	_, err := p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	all := readRange(t, p, 0) // what survived, in order
	require.Less(t, len(all), 400, "compaction left gaps")

	r := p.NewReader(0)
	defer r.Close()
	for off := p.StartOffset(); off < p.EndOffset(); off++ {
		r.SetOffset(off)
		var x log.Record
		ok, err := r.Next(&x)
		require.NoError(t, err)
		i := 0
		for i < len(all) && all[i].Offset < off {
			i++
		}
		if i == len(all) {
			require.False(t, ok, "offset %d", off)
			continue
		}
		require.True(t, ok, "offset %d", off)
		require.Equal(t, all[i].Offset, x.Offset, "the first record at or after %d", off)
		require.Equal(t, all[i].Value, x.Value)
	}
}

func TestReaderLookupOutOfRange(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	appendBatches(t, p, 4, 0, 200, 10)
	require.NoError(t, p.DeleteRecords(50))
	r := p.NewReader(0)
	defer r.Close()
	var x log.Record

	r.SetOffset(100)
	ok, err := r.Next(&x)
	require.NoError(t, err)
	require.True(t, ok)

	for _, off := range []int64{49, 0, 201} {
		r.SetOffset(off)
		_, err := r.Next(&x)
		require.ErrorIs(t, err, ErrOutOfRange, "offset %d", off)
	}
	r.SetOffset(200)
	ok, err = r.Next(&x)
	require.NoError(t, err)
	require.False(t, ok, "the end offset holds nothing yet")

	// A reader holding a segment finds the start moved past it, at the
	// latest when it reaches the next batch (of at most 10 records).
	r.SetOffset(60)
	ok, err = r.Next(&x)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, p.DeleteRecords(150))
	for range 10 {
		if _, err = r.Next(&x); err != nil {
			break
		}
		require.Less(t, x.Offset, int64(71))
	}
	require.ErrorIs(t, err, ErrOutOfRange)

	require.NoError(t, p.Close())
	r.SetOffset(160)
	_, err = r.Next(&x)
	require.ErrorIs(t, err, ErrClosed)
}

func TestReaderLookupAllocatesNothing(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	appendBatches(t, p, 5, 0, 300, 20)
	r := p.NewReader(0)
	defer r.Close()
	var x log.Record
	off := int64(0)
	allocs := testing.AllocsPerRun(500, func() {
		off = (off + 37) % 300
		r.SetOffset(off)
		if ok, err := r.Next(&x); !ok || err != nil || x.Offset != off {
			t.Fatal(ok, err, x.Offset, off)
		}
	})
	require.Zero(t, allocs)
}

// TestSkipToRejectsDamage: stepping over records by their length
// prefixes and decoding the rest still catches records that do not fill
// their batch exactly, and lengths that run past it.
func TestSkipToRejectsDamage(t *testing.T) {
	recs := make([]log.Record, 4) // 13 bytes each
	for i := range recs {
		recs[i] = log.Record{Key: []byte("k"), Value: []byte{1, 2, 3, 4, byte(i)}}
	}
	good, err := log.EncodeBatch(nil, recs, log.BatchOptions{})
	require.NoError(t, err)
	h, err := log.ReadHeader(good)
	require.NoError(t, err)
	require.Equal(t, byte(12<<1), good[log.BatchHeaderSize], "a 12-byte body")

	tests := []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"first length past the batch", func(b []byte) []byte {
			b[log.BatchHeaderSize] = 0x7e // 63 of the 51 bytes left
			return b
		}},
		{"first length too short", func(b []byte) []byte {
			b[log.BatchHeaderSize] = 2 // 1 byte: shorter than any record
			return b
		}},
		{"bytes after the last record", func(b []byte) []byte {
			return append(b, 0, 0, 0)
		}},
		{"a record missing", func(b []byte) []byte {
			return b[:len(b)-13]
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.damage(bytes.Clone(good))
			// The segment hands over a batch as long as its header says.
			hb := h
			hb.Length = int32(len(b) - 12)
			var x log.Record
			it, err := skipTo(hb, b, 2, nil, &log.Decoder{})
			for err == nil {
				if !it.Next(&x) {
					err = it.Err()
					break
				}
			}
			require.ErrorIs(t, err, log.ErrCorrupt)
		})
	}

	t.Run("undamaged", func(t *testing.T) {
		var x log.Record
		it, err := skipTo(h, good, 2, nil, &log.Decoder{})
		require.NoError(t, err)
		for i := int64(2); i < 4; i++ {
			ok := it.Next(&x)
			require.NoError(t, it.Err())
			require.True(t, ok)
			require.Equal(t, i, x.Offset)
			require.Equal(t, recs[i].Value, x.Value)
		}
		ok := it.Next(&x)
		require.NoError(t, it.Err())
		require.False(t, ok)
	})
}
