package strata_test

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/cputime"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/vfs"
)

// The benchmarks here measure the public API (api=store) beside the same
// operations on the partition package directly (api=partition), in the
// same run on the same data, so that the cost of the API layer (routing,
// topic lookup, copying records out for the caller) is a ratio:
//
//	go test -run '^$' -bench . -count 6 . | tee new.txt   # then benchstat new.txt

const (
	benchTopic   = "bench"
	benchRecords = 1_000_000 // records of the read benchmarks
	benchChunk   = 1000      // records per Read call
	benchFill    = 100       // records per append while filling
)

var benchCtx = context.Background()

// benchQuiet is a logger that drops everything.
var benchQuiet = slog.New(slog.DiscardHandler)

// benchRecs returns n records with 8-byte keys and 100-byte values, as the
// partition package's benchmarks use.
func benchRecs(n int) []strata.Record {
	recs := make([]strata.Record, n)
	for i := range recs {
		recs[i] = strata.Record{Key: fmt.Appendf(nil, "k%07d", i), Value: make([]byte, 100)}
	}
	return recs
}

// benchBatchSize is the encoded size of recs as one batch.
func benchBatchSize(b *testing.B, recs []strata.Record) int64 {
	batch, err := log.EncodeBatch(nil, recs, log.BatchOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return int64(len(batch))
}

// benchOpenStore opens a store in dir with SyncNever and a quiet logger.
func benchOpenStore(b *testing.B, dir string) *strata.Store {
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, Logger: benchQuiet})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// benchPartitionConfig is the configuration the store gives a default
// topic's partition: SyncNever and a quiet logger.
func benchPartitionConfig() partition.Config {
	return partition.Config{Sync: partition.SyncNever, Logger: benchQuiet}
}

// benchCPUPerOp reports the process's CPU time per op since cpu0, which
// cputime.Process returned (with ok) before the benchmark's loop.
func benchCPUPerOp(b *testing.B, cpu0 time.Duration, ok bool) {
	if cpu1, _ := cputime.Process(); ok {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

func benchRecordsPerSec(b *testing.B, perOp int) {
	b.ReportMetric(float64(b.N)*float64(perOp)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAppend appends 100 B records under SyncNever, one per call and in
// batches of 100: Store.Append (a keyed record routed by murmur2 to the
// topic's single partition) beside partition.Append.
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1, 100} {
		recs := benchRecs(n)
		size := benchBatchSize(b, recs)
		b.Run(fmt.Sprintf("api=store/records=%d", n), func(b *testing.B) {
			s := benchOpenStore(b, b.TempDir())
			defer s.Close()
			if err := s.CreateTopic(benchTopic, strata.TopicConfig{}); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(size)
			b.ReportAllocs()
			cpu0, cpuOK := cputime.Process()
			for b.Loop() {
				if _, err := s.Append(benchCtx, benchTopic, recs...); err != nil {
					b.Fatal(err)
				}
			}
			benchCPUPerOp(b, cpu0, cpuOK)
			benchRecordsPerSec(b, n)
		})
		b.Run(fmt.Sprintf("api=partition/records=%d", n), func(b *testing.B) {
			p, err := partition.Open(vfs.OS, b.TempDir(), benchPartitionConfig(), true)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			b.SetBytes(size)
			b.ReportAllocs()
			cpu0, cpuOK := cputime.Process()
			for b.Loop() {
				if _, err := p.Append(recs); err != nil {
					b.Fatal(err)
				}
			}
			benchCPUPerOp(b, cpu0, cpuOK)
			benchRecordsPerSec(b, n)
		})
	}
}

// benchFillStore writes benchRecords records of 100 B, in batches of 100,
// to the single partition of a new topic in a store in a new temporary
// directory, closes the store cleanly, and returns the directory and the
// size of the log.
func benchFillStore(b *testing.B) (dir string, bytes int64) {
	dir = b.TempDir()
	s := benchOpenStore(b, dir)
	if err := s.CreateTopic(benchTopic, strata.TopicConfig{}); err != nil {
		b.Fatal(err)
	}
	recs := benchRecs(benchFill)
	for range benchRecords / benchFill {
		if _, err := s.AppendTo(benchCtx, benchTopic, 0, recs...); err != nil {
			b.Fatal(err)
		}
	}
	d, err := s.DescribeTopic(benchTopic)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return dir, d.Partitions[0].Bytes
}

// benchOpenFilled opens the filled partition of benchFillStore directly,
// as the store would (it was closed cleanly).
func benchOpenFilled(b *testing.B, dir string) *partition.Partition {
	p, err := partition.Open(vfs.OS, filepath.Join(dir, benchTopic+"-0"), benchPartitionConfig(), true)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkRead reads 1 M records of 100 B from offset 0 to the end, per
// op: Store.Read in chunks of 1000 (each call returns records the caller
// owns) beside a partition.Reader (records alias its reused buffer). The
// store is filled once.
func BenchmarkRead(b *testing.B) {
	dir, size := benchFillStore(b)
	b.Run("api=store/records=1M/chunk=1000", func(b *testing.B) {
		s := benchOpenStore(b, dir)
		defer s.Close()
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			off := int64(0)
			for {
				recs, err := s.Read(benchCtx, benchTopic, 0, off, benchChunk)
				if err != nil {
					b.Fatal(err)
				}
				if len(recs) == 0 {
					break
				}
				off = recs[len(recs)-1].Offset + 1
			}
			if off != benchRecords {
				b.Fatalf("read up to offset %d", off)
			}
		}
		benchRecordsPerSec(b, benchRecords)
	})
	b.Run("api=partition/records=1M", func(b *testing.B) {
		p := benchOpenFilled(b, dir)
		defer p.Close()
		b.SetBytes(size)
		b.ReportAllocs()
		var rec log.Record
		for b.Loop() {
			r := p.NewReader(0)
			n := 0
			for {
				ok, err := r.Next(&rec)
				if err != nil {
					b.Fatal(err)
				}
				if !ok {
					break
				}
				n++
			}
			if n != benchRecords {
				b.Fatalf("read %d records", n)
			}
		}
		benchRecordsPerSec(b, benchRecords)
	})
}

// BenchmarkRecords iterates 1 M records of 100 B from offset 0 to the end,
// per op, with Store.Records beside partition.Records. The store is filled
// once.
func BenchmarkRecords(b *testing.B) {
	dir, size := benchFillStore(b)
	iterate := func(b *testing.B, all func(context.Context) iter.Seq2[strata.Record, error]) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			// The iterator tails the partition: stop at its last record.
			n := 0
			for r, err := range all(benchCtx) {
				if err != nil {
					b.Fatal(err)
				}
				n++
				if r.Offset == benchRecords-1 {
					break
				}
			}
			if n != benchRecords {
				b.Fatalf("read %d records", n)
			}
		}
		benchRecordsPerSec(b, benchRecords)
	}
	b.Run("api=store/records=1M", func(b *testing.B) {
		s := benchOpenStore(b, dir)
		defer s.Close()
		iterate(b, func(ctx context.Context) iter.Seq2[strata.Record, error] {
			return s.Records(ctx, benchTopic, 0, 0)
		})
	})
	b.Run("api=partition/records=1M", func(b *testing.B) {
		p := benchOpenFilled(b, dir)
		defer p.Close()
		iterate(b, func(ctx context.Context) iter.Seq2[strata.Record, error] {
			return p.Records(ctx, 0)
		})
	})
}
