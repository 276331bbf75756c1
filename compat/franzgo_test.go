package compat

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
)

var update = flag.Bool("update", false, "rewrite the golden batches in testdata/")

// events returns n JSON-like records, with nil and empty fields and
// headers in some.
func events(n int) []log.Record {
	recs := make([]log.Record, n)
	for i := range recs {
		r := log.Record{
			Timestamp: time.UnixMilli(1_700_000_000_000 + int64(i)),
			Key:       fmt.Appendf(nil, "order-%04d", i%50),
			Value:     fmt.Appendf(nil, `{"order":%d,"status":"paid","amount":%d.%02d,"currency":"EUR"}`, i, i*37%1000, i%100),
		}
		switch i % 6 {
		case 1:
			r.Key = nil
		case 2:
			r.Value = nil
		case 3:
			r.Headers = []log.Header{{Key: "trace", Value: fmt.Appendf(nil, "%016x", i)}, {Key: "empty", Value: []byte{}}}
		}
		recs[i] = r
	}
	return recs
}

// The codecs, in franz-go's names and Strata's.
var codecs = []struct {
	name   string
	strata log.Compression
	franz  kgo.CompressionCodec
	typ    int8
}{
	{"gzip", log.Gzip, kgo.GzipCompression(), 1},
	{"snappy", log.Snappy, kgo.SnappyCompression(), 2},
	{"lz4", log.LZ4, kgo.Lz4Compression(), 3},
	{"zstd", log.Zstd, kgo.ZstdCompression(), 4},
}

// kmsgRecords parses the uncompressed records section of a batch of n
// records with franz-go's parser.
func kmsgRecords(t *testing.T, section []byte, n int) []kmsg.Record {
	t.Helper()
	out := make([]kmsg.Record, 0, n)
	for range n {
		var r kmsg.Record
		require.NoError(t, r.ReadFrom(section))
		out = append(out, r)
		// The length varint and the body it counts.
		length, m := binary.Varint(section)
		require.Positive(t, m)
		section = section[m+int(length):]
	}
	require.Empty(t, section, "nothing after the last record")
	return out
}

// TestStrataBatchesDecodeInFranzGo: every batch Strata compresses parses
// with franz-go's kmsg (header fields, a CRC-32C it would accept), and its
// records section decompresses with franz-go's decompressor to the very
// records Strata encoded.
func TestStrataBatchesDecodeInFranzGo(t *testing.T) {
	dec := kgo.DefaultDecompressor()
	for _, c := range codecs {
		for _, n := range []int{2, 10, 100, 1000} {
			t.Run(fmt.Sprintf("%s/records=%d", c.name, n), func(t *testing.T) {
				recs := events(n)
				b, err := log.EncodeBatch(nil, recs, log.BatchOptions{BaseOffset: 500, Now: 1, Compression: c.strata})
				require.NoError(t, err)
				var kb kmsg.RecordBatch
				require.NoError(t, kb.ReadFrom(b))
				require.Equal(t, int64(500), kb.FirstOffset)
				require.Equal(t, int8(2), kb.Magic)
				require.Equal(t, int32(n), kb.NumRecords)
				require.Equal(t, c.typ, int8(kb.Attributes&7), "Strata compressed it")
				require.Equal(t, uint32(kb.CRC), crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))

				section, err := dec.Decompress(kb.Records, kgo.CompressionCodecType(c.typ))
				require.NoError(t, err, "franz-go decompresses Strata's %s", c.name)
				var d log.Decoder
				h, err := log.ReadHeader(b)
				require.NoError(t, err)
				plain, err := d.Plain(b, h)
				require.NoError(t, err)
				require.Equal(t, plain[log.BatchHeaderSize:], section)
				for i, r := range kmsgRecords(t, section, n) {
					require.Equal(t, int32(i), r.OffsetDelta)
					require.Equal(t, recs[i].Key == nil, r.Key == nil)
					require.Equal(t, string(recs[i].Key), string(r.Key))
					require.Equal(t, recs[i].Value == nil, r.Value == nil)
					require.Equal(t, string(recs[i].Value), string(r.Value))
					require.Len(t, r.Headers, len(recs[i].Headers))
				}
			})
		}
	}
}

// franzBatch compresses the records section of the uncompressed batch
// plain with franz-go's compressor for c, as kgo does for a produce
// request, and returns the batch: header as it was, with the codec, the
// length and the CRC-32C of what franz-go wrote.
func franzBatch(t *testing.T, plain []byte, c kgo.CompressionCodec) []byte {
	t.Helper()
	comp, err := kgo.DefaultCompressor(c)
	require.NoError(t, err)
	var buf bytes.Buffer
	out, typ := comp.Compress(&buf, plain[log.BatchHeaderSize:])
	return kafkadir.WithSection(plain, out, log.Compression(typ))
}

// TestFranzGoBatchesDecodeInStrata: batches compressed by franz-go (its
// default and its highest levels) read back in Strata record for record,
// and so do the golden batches franz-go compressed when they were made
// (testdata/franzgo-*.batch; -update writes them again).
func TestFranzGoBatchesDecodeInStrata(t *testing.T) {
	recs := events(100)
	plain, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1})
	require.NoError(t, err)
	var d log.Decoder
	read := func(t *testing.T, b []byte) []log.Record {
		h, err := log.CheckBatch(b)
		require.NoError(t, err)
		it, err := d.Iter(b, h)
		require.NoError(t, err)
		var out []log.Record
		var r log.Record
		for it.Next(&r) {
			out = append(out, log.Record{Offset: r.Offset, Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)})
		}
		require.NoError(t, it.Err())
		return out
	}
	check := func(t *testing.T, got []log.Record) {
		require.Len(t, got, len(recs))
		for i := range recs {
			require.Equal(t, int64(i), got[i].Offset)
			require.Equal(t, recs[i].Key == nil, got[i].Key == nil)
			require.Equal(t, string(recs[i].Key), string(got[i].Key))
			require.Equal(t, string(recs[i].Value), string(got[i].Value))
		}
	}
	for _, c := range codecs {
		for _, level := range []int{0, 9} {
			codec := c.franz
			if level > 0 {
				codec = codec.WithLevel(level)
			}
			t.Run(fmt.Sprintf("%s/level=%d", c.name, level), func(t *testing.T) {
				b := franzBatch(t, plain, codec)
				h, err := log.ReadHeader(b)
				require.NoError(t, err)
				require.Equal(t, c.strata, h.Compression())
				check(t, read(t, b))
			})
		}
		t.Run(c.name+"/golden", func(t *testing.T) {
			path := filepath.Join("testdata", "franzgo-"+c.name+".batch")
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, franzBatch(t, plain, c.franz), 0o644))
			}
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			check(t, read(t, b))
		})
	}
}
