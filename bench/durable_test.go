package bench

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/tidwall/wal"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/vfs"
)

// durableRecords is the workload of the durable-append benchmarks: 100
// records of a 16-byte key and a 100-byte value, appended in one call.
func durableRecords() []log.Record {
	recs := make([]log.Record, 100)
	for i := range recs {
		recs[i] = log.Record{Key: fmt.Appendf(nil, "key-%012d", i), Value: make([]byte, 100)}
		for j := range recs[i].Value {
			recs[i].Value[j] = byte(i + j)
		}
	}
	return recs
}

// durableBatch is durableRecords encoded as one Kafka batch: the bytes
// the raw baselines write per call.
func durableBatch(b *testing.B) []byte {
	batch, err := log.EncodeBatch(nil, durableRecords(), log.BatchOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return batch
}

// BenchmarkDurableAppend is one appender of 100-record batches, each on
// stable storage before the next: Strata's partition and Store under
// SyncAlways (with and without preallocated segments), tidwall/wal
// without NoSync (one WriteBatch of 100 entries), and, on Linux, the
// ceilings of raw system calls writing the same encoded batch (see
// benchmarkRawDurable). Compare the ratios of one run, not figures across
// runs: the cost is mostly the disk's.
func BenchmarkDurableAppend(b *testing.B) {
	recs := durableRecords()
	size := int64(len(durableBatch(b)))
	quiet := slog.New(slog.DiscardHandler)
	for _, prealloc := range []bool{false, true} {
		b.Run(fmt.Sprintf("impl=partition/prealloc=%v", prealloc), func(b *testing.B) {
			p, err := partition.Open(vfs.OS, b.TempDir(), partition.Config{
				Sync: partition.SyncAlways, Preallocate: prealloc, SegmentBytes: 256 << 20, Logger: quiet,
			}, false)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Append(recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
		})
		b.Run(fmt.Sprintf("impl=store/prealloc=%v", prealloc), func(b *testing.B) {
			s, err := strata.Open(b.TempDir(), &strata.Options{Sync: strata.SyncAlways, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 256 << 20, Preallocate: prealloc}); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.AppendTo(ctx, "t", 0, recs...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
		})
	}
	b.Run("impl=tidwall-wal", func(b *testing.B) {
		l, err := wal.Open(filepath.Join(b.TempDir(), "wal"), &wal.Options{NoSync: false})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		entries := make([][]byte, len(recs))
		for i, r := range recs {
			entries[i] = append(append([]byte(nil), r.Key...), r.Value...)
		}
		var batch wal.Batch
		next := uint64(1)
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			batch.Clear()
			for _, e := range entries {
				batch.Write(next, e)
				next++
			}
			if err := l.WriteBatch(&batch); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
	})
	benchmarkRawDurable(b, durableBatch(b), len(recs))
}
