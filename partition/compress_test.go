package partition

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

var testCodecs = []log.Compression{log.Gzip, log.Snappy, log.LZ4, log.Zstd}

// batchOf appends ids as one batch compressed with c and returns its first
// offset.
func batchOf(t testing.TB, p *Partition, c log.Compression, ids ...int) int64 {
	t.Helper()
	recs := make([]log.Record, len(ids))
	for i, id := range ids {
		recs[i] = rec(id)
	}
	off, err := p.AppendWith(recs, c, 0)
	require.NoError(t, err)
	return off
}

// codecsOnDisk returns the codec of every batch of the partition, in
// order.
func codecsOnDisk(t testing.TB, p *Partition) []log.Compression {
	t.Helper()
	var out []log.Compression
	for off := p.StartOffset(); off < p.EndOffset(); {
		b, err := p.ReadBatches(nil, off, 1)
		require.NoError(t, err)
		h, err := log.ReadHeader(b)
		require.NoError(t, err)
		out = append(out, h.Compression())
		off = h.NextOffset()
	}
	return out
}

// TestCompressedAppendsRead: batches of every codec read back through the
// Reader, from every offset (lookups into the middle of compressed
// batches), and after a reopen, clean or recovered.
func TestCompressedAppendsRead(t *testing.T) {
	clock := newClock()
	cfg := small(clock)
	cfg.SegmentBytes, cfg.MaxBatchBytes = 64<<10, 16<<10
	p, m := memPartition(t, cfg)
	id := 0
	var want []log.Compression
	for round := range 3 {
		for _, c := range testCodecs {
			n := 20 + round*7
			batchOf(t, p, c, seq(id, id+n)...)
			id += n
			want = append(want, c)
		}
	}
	require.Equal(t, want, codecsOnDisk(t, p), "each batch keeps its codec")
	check := func(p *Partition) {
		requireIDs(t, readRange(t, p, 0), 0, seq(0, id))
		r := p.NewReader(0)
		defer r.Close()
		var x log.Record
		for off := id - 1; off >= 0; off -= 3 {
			r.SetOffset(int64(off))
			ok, err := r.Next(&x)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, int64(off), x.Offset)
			require.Equal(t, rec(off).Value, x.Value)
		}
	}
	check(p)
	require.NoError(t, p.Close())
	for _, clean := range []bool{true, false} {
		p, err := Open(m, "topic-0", cfg, clean)
		require.NoError(t, err)
		check(p)
		require.NoError(t, p.Close())
	}
}

// TestForcedCompression: a partition with a codec of its own writes every
// batch with it — Append, AppendWith asking for another, AppendRawBatch given
// a batch of another codec (re-encoded, records unchanged) — while without
// one AppendRawBatch keeps the batch's codec.
func TestForcedCompression(t *testing.T) {
	for _, forced := range testCodecs {
		t.Run(forced.String(), func(t *testing.T) {
			cfg := small(newClock())
			cfg.SegmentBytes, cfg.MaxBatchBytes = 64<<10, 16<<10
			cfg.Compression, cfg.ForceCompression = forced, true
			p, _ := memPartition(t, cfg)
			defer p.Close()
			appendIDs(t, p, 0) // one record: not smaller compressed, written as it is
			_, err := p.Append([]log.Record{rec(1), rec(2), rec(3), rec(4)})
			require.NoError(t, err)
			batchOf(t, p, log.Gzip, 5, 6, 7, 8)
			for _, c := range append(testCodecs, log.None) {
				b, err := log.EncodeBatch(nil, []log.Record{rec(9), rec(10), rec(11)}, log.BatchOptions{Now: 1, Compression: c})
				require.NoError(t, err)
				before := p.EndOffset()
				_, err = p.AppendRawBatch(b)
				require.NoError(t, err)
				requireIDs(t, readRange(t, p, before), before, []int{9, 10, 11})
			}
			got := codecsOnDisk(t, p)
			require.Equal(t, log.None, got[0])
			for i, c := range got[1:] {
				require.Equal(t, forced, c, "batch %d", i+1)
			}
		})
	}
	// Without a codec of its own, AppendRawBatch keeps the batch's.
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	var recs []log.Record
	for i := range 20 {
		recs = append(recs, rec(i))
	}
	for _, c := range testCodecs {
		b, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1, Compression: c})
		require.NoError(t, err)
		_, err = p.AppendRawBatch(b)
		require.NoError(t, err)
	}
	require.Equal(t, testCodecs, codecsOnDisk(t, p))
}

// TestAppendRawBatchChecksCompressedRecords: a compressed batch given to
// AppendRawBatch is checked record by record: a key-less record in a
// compacted partition is refused, and so is a stream that does not
// decompress.
func TestAppendRawBatchChecksCompressedRecords(t *testing.T) {
	cfg := small(newClock())
	cfg.Compacted = true
	p, _ := memPartition(t, cfg)
	defer p.Close()
	recs := []log.Record{rec(1), rec(2), {Value: []byte("no key")}, rec(4)}
	for _, c := range testCodecs {
		b, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1, Compression: c})
		require.NoError(t, err)
		_, err = p.AppendRawBatch(b)
		require.ErrorIs(t, err, ErrNoKey, "%s", c)
		b[len(b)-3] ^= 0xff // damage the stream, and fix its CRC: written so
		fixBatchCRC(b)
		_, err = p.AppendRawBatch(b)
		require.ErrorIs(t, err, log.ErrCorrupt, "%s", c)
	}
	require.Zero(t, p.EndOffset(), "nothing was appended")
}

// TestTruncateInsideCompressedBatch: truncating in the middle of a
// compressed batch keeps its earlier records, compressed with its codec.
func TestTruncateInsideCompressedBatch(t *testing.T) {
	for _, c := range testCodecs {
		cfg := small(newClock())
		cfg.SegmentBytes, cfg.MaxBatchBytes = 64<<10, 16<<10
		p, _ := memPartition(t, cfg)
		batchOf(t, p, c, seq(0, 40)...)
		batchOf(t, p, c, seq(40, 80)...)
		require.NoError(t, p.Truncate(57))
		require.Equal(t, int64(57), p.EndOffset())
		requireIDs(t, readRange(t, p, 0), 0, seq(0, 57))
		require.Equal(t, []log.Compression{c, c}, codecsOnDisk(t, p), "%s: the cut batch keeps its codec", c)
		appendIDs(t, p, 57)
		requireIDs(t, readRange(t, p, 50), 50, seq(50, 58))
		require.NoError(t, p.Close())
	}
}

// TestCrashAtEveryOperationCompressed is TestCrashAtEveryOperation with
// every batch compressed.
func TestCrashAtEveryOperationCompressed(t *testing.T) {
	for _, c := range []log.Compression{log.Snappy, log.Zstd} {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			cfg := small(newClock())
			cfg.Sync = SyncAlways
			cfg.Compression = c
			crashAtEveryOperation(t, cfg)
		})
	}
}

// fixBatchCRC recomputes the CRC-32C of the batch b.
func fixBatchCRC(b []byte) {
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
}
