package partition

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// jsonBenchRecords returns n records like a service's events: a 12-byte
// key and about 200 bytes of JSON.
func jsonBenchRecords(from, n int) []log.Record {
	recs := make([]log.Record, n)
	for i := range recs {
		id := from + i
		recs[i] = log.Record{
			Key: fmt.Appendf(nil, "order-%06d", id%100000),
			Value: fmt.Appendf(nil, `{"order":%d,"customer":"customer-%05d","status":"paid","amount":%d.%02d,"currency":"EUR","items":%d,"trace":"%016x"}`,
				id, id%20000, id*37%1000, id%100, id%9, uint64(id)*0x9e3779b97f4a7c15),
		}
	}
	return recs
}

// openCompressedBench opens a partition under SyncNever in a temporary
// directory that compresses its appends with c, closed when b ends.
func openCompressedBench(b *testing.B, c log.Compression) *Partition {
	cfg := benchConfig(SyncNever)
	cfg.Compression = c
	p, err := Open(vfs.OS, b.TempDir(), cfg, false)
	require.NoError(b, err)
	b.Cleanup(func() { p.Close() })
	return p
}

var benchCodecs = []log.Compression{log.None, log.Gzip, log.Snappy, log.LZ4, log.Zstd}

// BenchmarkCompressedAppend appends batches of 100 JSON-like records of
// about 200 bytes, compressed with each codec (none is the baseline, in the
// same run), under SyncNever, and reports records/s and the bytes on disk
// per record.
func BenchmarkCompressedAppend(b *testing.B) {
	const perBatch = 100
	batches := make([][]log.Record, 64)
	for i := range batches {
		batches[i] = jsonBenchRecords(i*perBatch, perBatch)
	}
	for _, c := range benchCodecs {
		b.Run("codec="+c.String(), func(b *testing.B) {
			p := openCompressedBench(b, c)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := p.Append(batches[i%len(batches)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N*perBatch)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(p.Stats().Bytes)/float64(b.N*perBatch), "disk-bytes/record")
		})
	}
}

// BenchmarkCompressedRead reads 100,000 such records sequentially with a
// Reader, from batches of 100 compressed with each codec (none is the
// baseline), and reports records/s.
func BenchmarkCompressedRead(b *testing.B) {
	const perBatch, total = 100, 100_000
	for _, c := range benchCodecs {
		b.Run("codec="+c.String(), func(b *testing.B) {
			p := openCompressedBench(b, c)
			for i := 0; i < total; i += perBatch {
				_, err := p.Append(jsonBenchRecords(i, perBatch))
				require.NoError(b, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if n := readAllRecords(b, p); n != total {
					b.Fatalf("read %d records", n)
				}
			}
			b.ReportMetric(float64(b.N*total)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
