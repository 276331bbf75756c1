package bench

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tidwall/wal"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/cputime"
)

// BenchmarkColdCycle is what a test on real files pays for a log of its
// own, per op in a new directory: open, create a topic (Strata), write one
// 100-byte record, read it back, close. Strata runs under SyncNever (no
// fsync at all); tidwall/wal with NoSync (its Close still fsyncs the
// segment file, as its cycle does). Besides the wall-clock time it reports
// the process's CPU time per op (cpu-ns/op), steadier on a shared machine.
func BenchmarkColdCycle(b *testing.B) {
	value := make([]byte, 100)
	ctx := context.Background()
	b.Run("log=strata", func(b *testing.B) {
		b.ReportAllocs()
		root := b.TempDir()
		opts := &strata.Options{Sync: strata.SyncNever, Logger: slog.New(slog.DiscardHandler)}
		i := 0
		cpu0, ok0 := cputime.Process()
		for b.Loop() {
			i++
			s, err := strata.Open(filepath.Join(root, strconv.Itoa(i)), opts)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.CreateTopic("t", strata.TopicConfig{}); err != nil {
				b.Fatal(err)
			}
			if _, err := s.AppendTo(ctx, "t", 0, strata.Record{Value: value}); err != nil {
				b.Fatal(err)
			}
			if recs, err := s.Read(ctx, "t", 0, 0, 1); err != nil || len(recs) != 1 {
				b.Fatal(len(recs), err)
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu0, ok0)
	})
	b.Run("log=tidwall-wal", func(b *testing.B) {
		b.ReportAllocs()
		root := b.TempDir()
		i := 0
		cpu0, ok0 := cputime.Process()
		for b.Loop() {
			i++
			l, err := wal.Open(filepath.Join(root, strconv.Itoa(i)), &wal.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Write(1, value); err != nil {
				b.Fatal(err)
			}
			if got, err := l.Read(1); err != nil || len(got) != len(value) {
				b.Fatal(len(got), err)
			}
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu0, ok0)
	})
}
