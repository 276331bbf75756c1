package partition

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// TestReadRecordEveryOffset looks up every offset of a partition of many
// segments, batches of random sizes and every codec, in an order that
// jumps about, and checks each record and that it aliases the buffer.
func TestReadRecordEveryOffset(t *testing.T) {
	clock := newClock()
	cfg := small(clock)
	cfg.SegmentBytes, cfg.MaxBatchBytes = 8<<10, 4<<10
	p, _ := memPartition(t, cfg)
	defer p.Close()
	appendBatches(t, p, 3, 0, 300, 40)
	id := 300
	for _, c := range testCodecs {
		batchOf(t, p, c, seq(id, id+25)...)
		id += 25
	}
	require.Greater(t, len(p.Segments()), 2, "lookups cross segments")

	buf := make([]byte, 0, 4096)
	var x log.Record
	rnd := newRand(4)
	for _, off := range rnd.Perm(id) {
		out, err := p.ReadRecord(int64(off), &x, buf)
		require.NoError(t, err, "offset %d", off)
		want := rec(off)
		require.Equal(t, int64(off), x.Offset)
		require.Equal(t, want.Key, x.Key, "offset %d", off)
		require.Equal(t, want.Value, x.Value, "offset %d", off)
		require.Equal(t, clock.Now().UnixMilli(), x.Timestamp.UnixMilli())
		require.Len(t, out, len(want.Key)+len(want.Value))
		require.Same(t, &buf[:1][0], &out[:1][0], "the record is in the caller's buffer")
		require.Same(t, &buf[:1][0], &x.Key[0], "the key aliases the buffer")
		require.Equal(t, len(x.Value), cap(x.Value), "the value's capacity is clipped")
	}
}

// TestReadRecordFields: nil and empty keys and values, and headers, read
// back as they were written, into a nil buffer, a short one and a large
// one; the record outlives the partition.
func TestReadRecordFields(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	recs := []log.Record{
		{Key: nil, Value: []byte("no key")},
		{Key: []byte{}, Value: []byte{}},
		{Key: []byte("tombstone"), Value: nil},
		{Key: []byte("k"), Value: []byte("v"), Headers: []log.Header{{Key: "a", Value: []byte("1")}, {Key: "nil", Value: nil}, {Key: "", Value: []byte{}}}},
	}
	_, err := p.Append(recs)
	require.NoError(t, err)
	var kept []log.Record
	for _, size := range []int{0, 1, 4096} {
		for off, want := range recs {
			var buf []byte
			if size > 0 {
				buf = make([]byte, size)
			}
			var x log.Record
			_, err := p.ReadRecord(int64(off), &x, buf)
			require.NoError(t, err)
			require.Equal(t, want.Key == nil, x.Key == nil, "offset %d: nil key", off)
			require.Equal(t, want.Value == nil, x.Value == nil, "offset %d: nil value", off)
			require.Equal(t, string(want.Key), string(x.Key))
			require.Equal(t, string(want.Value), string(x.Value))
			require.Len(t, x.Headers, len(want.Headers))
			for i, h := range want.Headers {
				require.Equal(t, h.Key, x.Headers[i].Key)
				require.Equal(t, h.Value == nil, x.Headers[i].Value == nil, "offset %d header %d: nil value", off, i)
				require.Equal(t, string(h.Value), string(x.Headers[i].Value))
			}
			kept = append(kept, x)
		}
	}
	require.NoError(t, p.Close())
	require.Equal(t, "v", string(kept[3].Value), "a record read is the caller's")
	require.Equal(t, "1", string(kept[3].Headers[0].Value))
}

// TestReadRecordAllocs: a lookup into a buffer large enough allocates
// nothing, in a batch of many records and in a batch of one.
func TestReadRecordAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	appendBatches(t, p, 5, 0, 200, 15)
	appendIDs(t, p, 200, 201)
	buf := make([]byte, 4096)
	var x log.Record
	off := int64(0)
	allocs := testing.AllocsPerRun(500, func() {
		if _, err := p.ReadRecord(off, &x, buf); err != nil || x.Offset != off {
			t.Fatal(x.Offset, err)
		}
		off = (off + 37) % p.EndOffset()
	})
	require.Zero(t, allocs)
}

// TestReadRecordOutOfRange: offsets below the start offset, at the end and
// past it are ErrOutOfRange with the range readers see; a closed partition
// is ErrClosed.
func TestReadRecordOutOfRange(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	appendIDs(t, p, seq(0, 10)...)
	require.NoError(t, p.DeleteRecords(3))
	var x log.Record
	for _, off := range []int64{-1, 0, 2, 10, 11, 1 << 40} {
		_, err := p.ReadRecord(off, &x, nil)
		require.ErrorIs(t, err, ErrOutOfRange, "offset %d", off)
		require.ErrorContains(t, err, "[3, 10)", "offset %d", off)
	}
	_, err := p.ReadRecord(3, &x, nil)
	require.NoError(t, err)
	require.NoError(t, p.Close())
	_, err = p.ReadRecord(3, &x, nil)
	require.ErrorIs(t, err, ErrClosed)
}

// TestReadRecordOutOfRangeWhileFsyncing: under SyncAlways, the record of
// an append whose fsync is running (past the high watermark, below the end
// offset) is out of range: nothing reads it before it is durable.
func TestReadRecordOutOfRangeWhileFsyncing(t *testing.T) {
	cfg := small(newClock())
	cfg.Sync = SyncAlways
	p, m := memPartition(t, cfg)
	defer p.Close()
	appendIDs(t, p, 0, 1)
	finish := appendInFsync(p, m, 2) // the append wrote its batch and is in its fsync
	defer finish()                   // before Close, which waits for the fsync
	var x log.Record
	_, err := p.ReadRecord(2, &x, nil)
	_, err1 := p.ReadRecord(1, &x, nil)
	require.NoError(t, finish())
	require.ErrorIs(t, err, ErrOutOfRange)
	require.ErrorContains(t, err, "[0, 2)")
	require.NoError(t, err1)
	_, err = p.ReadRecord(2, &x, nil)
	require.NoError(t, err, "durable now")
}

// TestReadRecordCompacted: offsets compaction removed, inside batches and
// between them, are ErrNoRecord; the kept ones read back.
func TestReadRecordCompacted(t *testing.T) {
	p, _, clock := compactedPartition(t)
	defer p.Close()
	const n = 400
	rnd := newRand(6)
	for i := 0; i < n; {
		// Batches of 1 to 8 records over 40 keys: compaction leaves gaps
		// inside batches and removes whole batches.
		recs := make([]log.Record, min(n-i, 1+rnd.IntN(8)))
		for j := range recs {
			recs[j] = log.Record{Key: []byte(fmt.Sprint("k", rnd.IntN(40))), Value: []byte(fmt.Sprint(i + j))}
		}
		_, err := p.Append(recs)
		require.NoError(t, err)
		i += len(recs)
	}
	_, err := p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	kept := map[int64]bool{}
	for _, r := range readRange(t, p, 0) {
		kept[r.Offset] = true
	}
	require.Less(t, len(kept), n/2, "compaction removed most offsets")
	var x log.Record
	for off := range int64(n) {
		_, err := p.ReadRecord(off, &x, nil)
		if !kept[off] {
			require.ErrorIs(t, err, ErrNoRecord, "offset %d", off)
			continue
		}
		require.NoError(t, err, "offset %d", off)
		require.Equal(t, off, x.Offset)
		require.Equal(t, fmt.Sprint(off), string(x.Value))
	}
}

// TestReadRecordDamage: a damaged batch is ErrCorrupt with the file; the
// records around it read back.
func TestReadRecordDamage(t *testing.T) {
	clock := newClock()
	cfg := small(clock)
	cfg.SegmentBytes = 64 << 10
	p, m := memPartition(t, cfg)
	appendIDs(t, p, seq(0, 20)...)
	require.NoError(t, p.Close())
	path := "topic-0/" + segment.FileName(0, segment.LogSuffix)
	f, err := m.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	pos := batchPosition(t, f, 10)
	_, err = f.WriteAt([]byte{0xff}, pos+log.BatchHeaderSize+2) // inside the record, covered by the CRC
	require.NoError(t, err)
	require.NoError(t, f.Close())

	p, err = Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	defer p.Close()
	var x log.Record
	_, err = p.ReadRecord(10, &x, nil)
	require.ErrorIs(t, err, log.ErrCorrupt)
	require.ErrorContains(t, err, segment.FileName(0, segment.LogSuffix))
	for _, off := range []int64{9, 11} {
		_, err = p.ReadRecord(off, &x, nil)
		require.NoError(t, err, "offset %d", off)
		require.Equal(t, rec(int(off)).Value, x.Value)
	}
}
