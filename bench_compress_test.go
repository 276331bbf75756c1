package strata_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stratalog/strata"
)

// benchTopicStore opens a store under SyncNever in a temporary directory,
// with topic "t" of one partition configured as cfg, closed when b ends.
func benchTopicStore(b *testing.B, cfg strata.TopicConfig) *strata.Store {
	s, err := strata.Open(b.TempDir(), &strata.Options{Sync: strata.SyncNever, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.CreateTopic("t", cfg); err != nil {
		b.Fatal(err)
	}
	return s
}

var benchCompressions = []strata.CompressionType{strata.CompressionNone, strata.CompressionGzip, strata.CompressionSnappy,
	strata.CompressionLZ4, strata.CompressionZstd}

// BenchmarkProducerCompression produces JSON-like records of about 200
// bytes from one goroutine through a Producer compressing its batches
// with each codec (none is the baseline, in the same run), under SyncNever,
// and reports records/s and the bytes on disk per record.
func BenchmarkProducerCompression(b *testing.B) {
	recs := eventRecords(0, 4096)
	ctx := context.Background()
	for _, ct := range benchCompressions {
		b.Run("codec="+string(ct), func(b *testing.B) {
			s := benchTopicStore(b, strata.TopicConfig{})
			p := s.Producer(strata.ProducerOptions{Compression: ct})
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := p.Produce(ctx, "t", recs[i%len(recs)], nil); err != nil {
					b.Fatal(err)
				}
			}
			if err := p.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			d, err := s.DescribeTopic("t")
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(d.Partitions[0].Bytes)/float64(b.N), "disk-bytes/record")
		})
	}
}

// BenchmarkRecordsCompression reads 100,000 such records with the Records
// iterator, from batches of 100 compressed with each codec (none is the
// baseline), and reports records/s.
func BenchmarkRecordsCompression(b *testing.B) {
	const total = 100_000
	ctx := context.Background()
	for _, ct := range benchCompressions {
		b.Run("codec="+string(ct), func(b *testing.B) {
			s := benchTopicStore(b, strata.TopicConfig{Compression: ct})
			for i := 0; i < total; i += 100 {
				if _, err := s.AppendTo(ctx, "t", 0, eventRecords(i, 100)...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for _, err := range s.Records(ctx, "t", 0, 0) {
					if err != nil {
						b.Fatal(err)
					}
					if n++; n == total {
						break
					}
				}
			}
			b.ReportMetric(float64(b.N*total)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
