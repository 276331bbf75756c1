package bench

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tidwall/wal"

	"github.com/stratalog/strata"
)

// closeRecords is how many single-record appends come before the Close.
const closeRecords = 1_000_000

// BenchmarkCloseAfterAppends is what Close costs after 1 M appends of one
// record each (16 B key, 100 B value) to a new log without fsync: Strata
// under SyncNever, tidwall/wal with NoSync (its Close fsyncs the last
// segment file). Each op fills a new log and closes it; ns/op is the whole
// op, close-ns/op the Close alone, the figure to compare, and
// close-cpu-ns/op the process's CPU time in it, steadier on a shared
// machine.
func BenchmarkCloseAfterAppends(b *testing.B) {
	key, value := benchRecord()
	ctx := context.Background()
	b.Run("log=strata", func(b *testing.B) {
		root := b.TempDir()
		opts := &strata.Options{Sync: strata.SyncNever, Logger: slog.New(slog.DiscardHandler)}
		var closing, closingCPU time.Duration
		for i := range b.N {
			s, err := strata.Open(filepath.Join(root, strconv.Itoa(i)), opts)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.CreateTopic("t", strata.TopicConfig{}); err != nil {
				b.Fatal(err)
			}
			for range closeRecords {
				if _, err := s.AppendTo(ctx, "t", 0, strata.Record{Key: key, Value: value}); err != nil {
					b.Fatal(err)
				}
			}
			start := time.Now()
			cpu0, _ := processCPU()
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			closing += time.Since(start)
			cpu, _ := processCPU()
			closingCPU += cpu - cpu0
		}
		b.ReportMetric(float64(closing.Nanoseconds())/float64(b.N), "close-ns/op")
		if _, ok := processCPU(); ok {
			b.ReportMetric(float64(closingCPU.Nanoseconds())/float64(b.N), "close-cpu-ns/op")
		}
	})
	b.Run("log=tidwall-wal", func(b *testing.B) {
		root := b.TempDir()
		data := append(key[:len(key):len(key)], value...)
		var closing, closingCPU time.Duration
		for i := range b.N {
			l, err := wal.Open(filepath.Join(root, strconv.Itoa(i)), &wal.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			for j := range uint64(closeRecords) {
				if err := l.Write(j+1, data); err != nil {
					b.Fatal(err)
				}
			}
			start := time.Now()
			cpu0, _ := processCPU()
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
			closing += time.Since(start)
			cpu, _ := processCPU()
			closingCPU += cpu - cpu0
		}
		b.ReportMetric(float64(closing.Nanoseconds())/float64(b.N), "close-ns/op")
		if _, ok := processCPU(); ok {
			b.ReportMetric(float64(closingCPU.Nanoseconds())/float64(b.N), "close-cpu-ns/op")
		}
	})
}
