package log_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
)

var codecs = []log.Compression{log.Gzip, log.Snappy, log.LZ4, log.Zstd}

// jsonRecords returns n records like a service's events: a short key and
// about 200 bytes of JSON, with a nil or empty key, value or header in
// some, so that compression has something to find and the edge cases go
// through it too.
func jsonRecords(n int, seed uint64) []log.Record {
	rng := rand.New(rand.NewPCG(seed, seed))
	recs := make([]log.Record, n)
	for i := range recs {
		r := log.Record{
			Timestamp: time.UnixMilli(1_700_000_000_000 + int64(i)*7),
			Key:       fmt.Appendf(nil, "order-%06d", rng.IntN(100000)),
			Value: fmt.Appendf(nil, `{"id":%d,"customer":"c-%05d","amount":%d.%02d,"currency":"EUR","status":"created","trace":"%016x"}`,
				i, rng.IntN(10000), rng.IntN(1000), rng.IntN(100), rng.Uint64()),
		}
		switch i % 7 {
		case 1:
			r.Key = nil
		case 2:
			r.Value = nil
		case 3:
			r.Key, r.Value = []byte{}, []byte{}
		case 4:
			r.Headers = []log.Header{{Key: "source", Value: []byte("api")}, {Key: "nil", Value: nil}, {Key: "", Value: []byte{}}}
		}
		recs[i] = r
	}
	return recs
}

// readAll decodes every record of batch with d, copying what it keeps.
func readAll(t *testing.T, d *log.Decoder, batch []byte) []log.Record {
	t.Helper()
	h, err := log.CheckBatch(batch)
	require.NoError(t, err)
	it, err := d.Iter(batch, h)
	require.NoError(t, err)
	var out []log.Record
	var r log.Record
	for it.Next(&r) {
		c := r
		c.Key, c.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
		c.Headers = append([]log.Header(nil), r.Headers...)
		out = append(out, c)
	}
	require.NoError(t, it.Err())
	return out
}

// sameRecords checks that got are want read back at offsets base, base+1, …
func sameRecords(t *testing.T, want, got []log.Record, base int64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, base+int64(i), got[i].Offset)
		require.Equal(t, want[i].Timestamp.UnixMilli(), got[i].Timestamp.UnixMilli())
		require.Equal(t, want[i].Key == nil, got[i].Key == nil, "record %d: nil key kept", i)
		require.Equal(t, want[i].Value == nil, got[i].Value == nil, "record %d: nil value kept", i)
		require.Equal(t, string(want[i].Key), string(got[i].Key))
		require.Equal(t, string(want[i].Value), string(got[i].Value))
		require.Len(t, got[i].Headers, len(want[i].Headers))
		for j, hd := range want[i].Headers {
			require.Equal(t, hd.Key, got[i].Headers[j].Key)
			require.Equal(t, hd.Value == nil, got[i].Headers[j].Value == nil)
			require.Equal(t, string(hd.Value), string(got[i].Headers[j].Value))
		}
	}
}

// TestCompressedRoundTrip: every codec, at several batch sizes, writes a
// batch that checks (CRC over the compressed bytes), says its codec, reads
// back every record, and is smaller than the batch uncompressed.
func TestCompressedRoundTrip(t *testing.T) {
	var d log.Decoder
	for _, c := range codecs {
		for _, n := range []int{1, 10, 100, 1000} {
			t.Run(fmt.Sprintf("%s/records=%d", c, n), func(t *testing.T) {
				recs := jsonRecords(n, uint64(n))
				plain, err := log.EncodeBatch(nil, recs, log.BatchOptions{BaseOffset: 100, Now: 1})
				require.NoError(t, err)
				b, err := log.EncodeBatch([]byte("prefix"), recs, log.BatchOptions{BaseOffset: 100, Now: 1, Compression: c})
				require.NoError(t, err)
				require.Equal(t, "prefix", string(b[:6]))
				b = b[6:]
				h, err := log.CheckBatch(b)
				require.NoError(t, err)
				require.Equal(t, len(b), h.Size())
				if n == 1 {
					// One small record does not get smaller: it is written
					// uncompressed, as Kafka's clients do.
					require.Equal(t, log.None, h.Compression())
					require.Equal(t, plain, b)
				} else {
					require.Equal(t, c, h.Compression())
					require.Less(t, len(b), len(plain))
				}
				sameRecords(t, recs, readAll(t, &d, b), 100)
				_, err = d.Validate(b)
				require.NoError(t, err)
				ph, err := log.ReadHeader(plain)
				require.NoError(t, err)
				require.Equal(t, ph.MaxTimestamp, h.MaxTimestamp, "the header's fields are those of the records")
				require.Equal(t, ph.LastOffsetDelta, h.LastOffsetDelta)
				require.Equal(t, ph.NumRecords, h.NumRecords)
			})
		}
	}
}

// TestCompressedBatchHeader: EncodeBatchWithHeader compresses with the codec of
// the header it is given, keeping every field, as compaction needs.
func TestCompressedBatchHeader(t *testing.T) {
	var d log.Decoder
	recs := jsonRecords(50, 3)
	for i := range recs {
		recs[i].Offset = 1000 + 2*int64(i) // a gap between each, as after compaction
	}
	for _, c := range codecs {
		h := log.BatchHeader{BaseOffset: 1000, PartitionLeaderEpoch: 7, Attributes: int16(c) | log.AttrTransactional,
			LastOffsetDelta: 120, BaseTimestamp: 1_700_000_000_000, MaxTimestamp: 1_700_000_009_999,
			ProducerID: 42, ProducerEpoch: 3, BaseSequence: 17}
		b, err := log.EncodeBatchWithHeader(nil, h, recs)
		require.NoError(t, err)
		got, err := log.CheckBatch(b)
		require.NoError(t, err)
		require.Equal(t, c, got.Compression())
		require.True(t, got.IsTransactional())
		require.Equal(t, h.LastOffsetDelta, got.LastOffsetDelta)
		require.Equal(t, h.ProducerID, got.ProducerID)
		require.Equal(t, h.BaseSequence, got.BaseSequence)
		out := readAll(t, &d, b)
		require.Len(t, out, len(recs))
		for i := range recs {
			require.Equal(t, recs[i].Offset, out[i].Offset)
			require.Equal(t, string(recs[i].Value), string(out[i].Value))
		}
	}
}

// TestEncodeBatchHeader checks the header EncodeBatchHeader returns against
// the one ReadHeader reads from the batch it wrote, uncompressed and with
// each codec (which changes the length, the attributes and the CRC), and
// its failure on no records.
func TestEncodeBatchHeader(t *testing.T) {
	recs := jsonRecords(50, 4)
	for _, c := range append([]log.Compression{log.None}, codecs...) {
		t.Run(c.String(), func(t *testing.T) {
			opts := log.BatchOptions{Now: 1_700_000_000_000, Compression: c, Idempotent: true, ProducerID: 9, BaseSequence: 5}
			b, h, err := log.EncodeBatchHeader([]byte("x"), recs, opts)
			require.NoError(t, err)
			want, err := log.CheckBatch(b[1:])
			require.NoError(t, err)
			require.Equal(t, want, h)
			require.Equal(t, c, h.Compression())
		})
	}
	b, h, err := log.EncodeBatchHeader([]byte("x"), nil, log.BatchOptions{})
	require.ErrorIs(t, err, log.ErrEmptyBatch)
	require.Equal(t, []byte("x"), b)
	require.Equal(t, log.BatchHeader{}, h)
}

// TestCompressionLevels: every valid level of every codec works and reads
// back; levels out of range are refused.
func TestCompressionLevels(t *testing.T) {
	var d log.Decoder
	recs := jsonRecords(100, 9)
	for c, levels := range map[log.Compression][]int{
		log.Gzip: {1, 5, 9}, log.LZ4: {1, 4, 9, 12, 17}, log.Zstd: {-5, 1, 3, 7, 12, 22},
	} {
		for _, level := range levels {
			b, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1, Compression: c, CompressionLevel: level})
			require.NoError(t, err, "%s level %d", c, level)
			sameRecords(t, recs, readAll(t, &d, b), 0)
		}
	}
	for c, level := range map[log.Compression]int{log.Gzip: 10, log.LZ4: 18, log.Zstd: 23, log.Snappy: 1, log.None: 2} {
		_, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1, Compression: c, CompressionLevel: level})
		require.ErrorIs(t, err, log.ErrInvalidBatch, "%s level %d", c, level)
	}
	_, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1, Compression: 5})
	require.ErrorIs(t, err, log.ErrUnsupportedCompression)
}

// TestSnappyFramings: a snappy batch reads back whether its records are a
// raw block (librdkafka, franz-go, Strata) or in xerial framing (Kafka's
// Java producer), in one chunk or several.
func TestSnappyFramings(t *testing.T) {
	var d log.Decoder
	recs := jsonRecords(200, 4)
	plain, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1})
	require.NoError(t, err)
	section := plain[log.BatchHeaderSize:]
	xerial := func(chunk int) []byte {
		out := []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}
		for p := 0; p < len(section); p += chunk {
			block := s2.EncodeSnappy(nil, section[p:min(len(section), p+chunk)])
			out = binary.BigEndian.AppendUint32(out, uint32(len(block)))
			out = append(out, block...)
		}
		return out
	}
	for name, framed := range map[string][]byte{
		"raw block":         s2.EncodeSnappy(nil, section),
		"xerial, one chunk": xerial(1 << 20),
		"xerial, 32 KiB":    xerial(32 << 10),
		"xerial, 1 KiB":     xerial(1 << 10),
	} {
		t.Run(name, func(t *testing.T) {
			b := kafkadir.WithSection(plain, framed, log.Snappy)
			sameRecords(t, recs, readAll(t, &d, b), 0)
		})
	}
	// A chunk length past the end is corrupt, not a panic.
	bad := xerial(32 << 10)
	binary.BigEndian.PutUint32(bad[16:], 1<<30)
	b := kafkadir.WithSection(plain, bad, log.Snappy)
	h, err := log.CheckBatch(b)
	require.NoError(t, err)
	_, err = d.Iter(b, h)
	require.ErrorIs(t, err, log.ErrCorrupt)
}

// TestDecompressLimit: records that decompress past the Decoder's limit
// are ErrTooLarge, for every codec, and a later batch reads fine.
func TestDecompressLimit(t *testing.T) {
	recs := []log.Record{{Value: bytes.Repeat([]byte("a"), 1<<20)}, {Value: bytes.Repeat([]byte("b"), 1<<20)}}
	for _, c := range codecs {
		b, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1, Compression: c})
		require.NoError(t, err)
		h, err := log.CheckBatch(b)
		require.NoError(t, err)
		require.Less(t, len(b), 256<<10, "%s squeezes 2 MiB of one byte", c)
		d := log.Decoder{Limit: 1 << 20}
		_, err = d.Iter(b, h)
		require.ErrorIs(t, err, log.ErrTooLarge, "%s", c)
		d.Limit = 4 << 20
		it, err := d.Iter(b, h)
		require.NoError(t, err, "%s", c)
		var r log.Record
		require.True(t, it.Next(&r))
		require.Len(t, r.Value, 1<<20)
	}
}

// allocatedBy returns the bytes f allocated.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestDecompressionBombsStayBounded: what decompressing a hostile batch
// allocates stays near the Decoder's limit: a zstd frame that declares a
// 512 MiB window but holds 128 KiB, and a gzip stream of a few hundred KiB
// that inflates to 200 MiB. A zstd frame whose window is larger than the
// limit is refused (only zstd's ultra levels write such windows).
func TestDecompressionBombsStayBounded(t *testing.T) {
	plain, err := log.EncodeBatch(nil, []log.Record{{Value: []byte("v")}}, log.BatchOptions{Now: 1})
	require.NoError(t, err)

	// zstd: magic, a frame header with windowLog 29 and no content size,
	// then one last RLE block of 128 KiB of 'x'.
	frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 19 << 3}
	blk := uint32(1 | 1<<1 | (128<<10)<<3)
	frame = append(frame, byte(blk), byte(blk>>8), byte(blk>>16), 'x')
	b := kafkadir.WithSection(plain, frame, log.Zstd)
	h, err := log.CheckBatch(b)
	require.NoError(t, err)
	d := log.Decoder{Limit: 1 << 30}
	var out []byte
	n := allocatedBy(func() { out, err = d.Plain(b, h) })
	require.NoError(t, err)
	require.Equal(t, bytes.Repeat([]byte("x"), 128<<10), out[log.BatchHeaderSize:])
	require.Less(t, n, uint64(16<<20), "the declared window is not allocated")
	d = log.Decoder{Limit: 1 << 20} // a window past the limit is refused
	n = allocatedBy(func() { _, err = d.Plain(b, h) })
	require.ErrorIs(t, err, log.ErrTooLarge)
	require.Less(t, n, uint64(16<<20))

	var zb bytes.Buffer
	w := gzip.NewWriter(&zb)
	zeros := make([]byte, 1<<20)
	for range 200 {
		_, err := w.Write(zeros)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	b = kafkadir.WithSection(plain, zb.Bytes(), log.Gzip)
	h, err = log.CheckBatch(b)
	require.NoError(t, err)
	d = log.Decoder{Limit: 64 << 20}
	n = allocatedBy(func() { _, err = d.Plain(b, h) })
	require.ErrorIs(t, err, log.ErrTooLarge)
	require.Less(t, n, uint64(3*64<<20), "at most about twice the limit")
}

// TestDamagedStreams: a compressed records section that is not a valid
// stream is ErrCorrupt (its CRC matching: written so), never a panic.
func TestDamagedStreams(t *testing.T) {
	var d log.Decoder
	recs := jsonRecords(100, 5)
	for _, c := range codecs {
		b, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1, Compression: c})
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(uint64(c), 1))
		for range 200 {
			x := bytes.Clone(b)
			switch rng.IntN(3) {
			case 0: // a flipped byte in the stream
				x[log.BatchHeaderSize+rng.IntN(len(x)-log.BatchHeaderSize)] ^= byte(1 + rng.IntN(255))
			case 1: // the stream cut short
				x = x[:log.BatchHeaderSize+rng.IntN(len(x)-log.BatchHeaderSize)]
				binary.BigEndian.PutUint32(x[8:], uint32(len(x)-12))
			case 2: // garbage
				for i := log.BatchHeaderSize; i < len(x); i++ {
					x[i] = byte(rng.Uint32())
				}
			}
			fixCRC(x)
			h, err := log.CheckBatch(x)
			require.NoError(t, err)
			it, err := d.Iter(x, h)
			if err == nil {
				var r log.Record
				for it.Next(&r) {
				}
				err = it.Err()
			}
			if err != nil && !errors.Is(err, log.ErrTooLarge) { // garbage may claim a huge size
				require.ErrorIs(t, err, log.ErrCorrupt, "%s: %v", c, err)
			}
		}
	}
}

// TestDecoderReusesItsBuffer: a stream of compressed batches allocates
// nothing per batch once the buffer has grown, and nothing per record.
func TestDecoderReusesItsBuffer(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	recs := jsonRecords(100, 6)
	for i := range recs {
		recs[i].Headers = nil // header keys are strings: they allocate
	}
	for _, c := range []log.Compression{log.Snappy, log.LZ4, log.Zstd, log.Gzip} {
		b, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1, Compression: c})
		require.NoError(t, err)
		h, err := log.CheckBatch(b)
		require.NoError(t, err)
		var d log.Decoder
		var r log.Record
		read := func() {
			it, err := d.Iter(b, h)
			if err != nil {
				panic(err)
			}
			for it.Next(&r) {
			}
		}
		read()
		// The same batch twice is decompressed once; every other batch
		// decompresses into the buffer the first one grew.
		other := bytes.Clone(b)
		allocs := testing.AllocsPerRun(20, func() {
			read()
			b, other = other, b
		})
		require.LessOrEqual(t, allocs, 2.0, "%s: %v allocations per batch of 100 records", c, allocs)
	}
}

// TestLegacyMessages: a message of the formats before v2 (magic 0 and 1)
// is read as a header, its CRC checked, and its records refused with
// ErrUnsupportedFormat; it is never taken for damage.
func TestLegacyMessages(t *testing.T) {
	for _, magic := range []byte{0, 1} {
		b := kafkadir.Legacy(magic, 77, time.UnixMilli(1_500_000_000_000), []byte("key"), []byte("value"))
		h, err := log.ReadHeader(b)
		require.NoError(t, err)
		require.True(t, h.IsLegacy())
		require.Equal(t, int64(77), h.BaseOffset)
		require.Equal(t, int64(78), h.NextOffset())
		require.Equal(t, len(b), h.Size())
		_, err = log.CheckBatch(b)
		require.NoError(t, err, "magic %d: the CRC-32 matches", magic)
		base, last, size, ok := log.PeekHeader(b)
		require.True(t, ok)
		require.Equal(t, [3]int64{77, 77, int64(len(b))}, [3]int64{base, last, size})
		_, err = log.NewRecordIter(b)
		require.ErrorIs(t, err, log.ErrUnsupportedFormat)
		var d log.Decoder
		_, err = d.Iter(b, h)
		require.ErrorIs(t, err, log.ErrUnsupportedFormat)
		_, err = log.Validate(b)
		require.ErrorIs(t, err, log.ErrUnsupportedFormat)

		bad := bytes.Clone(b)
		bad[len(bad)-1] ^= 1
		_, err = log.CheckBatch(bad)
		require.ErrorIs(t, err, log.ErrCorrupt, "magic %d: a damaged message fails its CRC", magic)
		_, err = log.ReadHeader(b[:map[byte]int{0: 17, 1: 25}[magic]])
		require.ErrorIs(t, err, log.ErrIncomplete, "magic %d: a header cut short", magic)
	}
}

// TestUnknownCodecIsKept: a batch flagged with a codec Kafka does not have
// (5 to 7) but whose CRC matches is not damage: its header reads, the CRC
// checks, and reading its records says the codec is unsupported.
func TestUnknownCodecIsKept(t *testing.T) {
	b := goldenBatch(t)
	b[22] |= 6
	fixCRC(b)
	h, err := log.CheckBatch(b)
	require.NoError(t, err)
	var d log.Decoder
	_, err = d.Iter(b, h)
	require.ErrorIs(t, err, log.ErrUnsupportedCompression)
}

// TestLZ4FrameFormat: the frames written are those of lz4's reference
// format as pierrec/lz4's streaming writer writes them with Kafka's
// options (the header, and its checksum byte, the same), and frames of
// every option the format has — block checksums, a content checksum and
// size, 4 MiB blocks, dependent blocks — read back.
func TestLZ4FrameFormat(t *testing.T) {
	var d log.Decoder
	recs := jsonRecords(2000, 11) // more than one 64 KiB block
	plain, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1})
	require.NoError(t, err)
	section := plain[log.BatchHeaderSize:]
	require.Greater(t, len(section), 64<<10)
	ours, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1, Compression: log.LZ4})
	require.NoError(t, err)
	var ref bytes.Buffer
	w := lz4.NewWriter(&ref)
	require.NoError(t, w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.BlockChecksumOption(false), lz4.ChecksumOption(false)))
	_, err = w.Write(section)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Equal(t, ref.Bytes()[:7], ours[log.BatchHeaderSize:log.BatchHeaderSize+7], "the frame header, checksum byte included")

	for name, opts := range map[string][]lz4.Option{
		"block and content checksums": {lz4.BlockChecksumOption(true), lz4.ChecksumOption(true)},
		"4 MiB blocks":                {lz4.BlockSizeOption(lz4.Block4Mb)},
		"content size":                {lz4.SizeOption(uint64(len(section)))},
		"high compression":            {lz4.CompressionLevelOption(lz4.Level9)},
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			w := lz4.NewWriter(&b)
			require.NoError(t, w.Apply(opts...))
			_, err := w.Write(section)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			sameRecords(t, recs, readAll(t, &d, kafkadir.WithSection(plain, b.Bytes(), log.LZ4)), 0)
		})
	}
	t.Run("two frames", func(t *testing.T) {
		half := len(section) / 2
		var b bytes.Buffer
		for _, part := range [][]byte{section[:half], section[half:]} {
			w := lz4.NewWriter(&b)
			_, err := w.Write(part)
			require.NoError(t, err)
			require.NoError(t, w.Close())
		}
		sameRecords(t, recs, readAll(t, &d, kafkadir.WithSection(plain, b.Bytes(), log.LZ4)), 0)
	})
}

// TestLZ4HeaderChecksum: a frame whose header checksum is wrong is
// corrupt, as Kafka's reader has it, though the batch's CRC matches.
func TestLZ4HeaderChecksum(t *testing.T) {
	b, err := log.EncodeBatch(nil, jsonRecords(50, 1), log.BatchOptions{Now: 1, Compression: log.LZ4})
	require.NoError(t, err)
	h, err := log.CheckBatch(b)
	require.NoError(t, err)
	require.Equal(t, log.LZ4, h.Compression())
	var d log.Decoder
	_, err = d.Plain(b, h)
	require.NoError(t, err)
	bad := bytes.Clone(b)
	bad[log.BatchHeaderSize+6] ^= 0x01 // magic (4), FLG, BD, then the checksum
	fixCRC(bad)
	h, err = log.CheckBatch(bad)
	require.NoError(t, err)
	_, err = d.Plain(bad, h)
	require.ErrorIs(t, err, log.ErrCorrupt)
}

// TestEncodeAllocatesNothingPerBatch: encoding into a buffer large enough
// allocates nothing, at every codec's default level and at a high lz4
// level (pooled per level).
func TestEncodeAllocatesNothingPerBatch(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop what is put back")
	}
	recs := jsonRecords(100, 2)
	buf := make([]byte, 0, 1<<20)
	for _, o := range []log.BatchOptions{
		{Compression: log.Snappy}, {Compression: log.LZ4}, {Compression: log.LZ4, CompressionLevel: 12},
		{Compression: log.Zstd}, {Compression: log.Gzip},
	} {
		o.Now = 1
		_, err := log.EncodeBatch(buf[:0], recs, o)
		require.NoError(t, err)
		for range 100 { // the codecs' own pools fill up
			_, _ = log.EncodeBatch(buf[:0], recs, o)
		}
		n := testing.AllocsPerRun(100, func() { _, _ = log.EncodeBatch(buf[:0], recs, o) })
		require.Zero(t, n, "%s level %d", o.Compression, o.CompressionLevel)
	}
}
