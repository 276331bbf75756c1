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
	"github.com/stratalog/strata/internal/cputime"
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
		var ct closeTimes
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
			ct.time(b, s.Close)
		}
		ct.report(b)
	})
	b.Run("log=tidwall-wal", func(b *testing.B) {
		root := b.TempDir()
		data := append(key[:len(key):len(key)], value...)
		var ct closeTimes
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
			ct.time(b, l.Close)
		}
		ct.report(b)
	})
}

// closeTimes adds up the wall-clock and CPU time of the Close calls it
// times, and reports them per op.
type closeTimes struct {
	wall, cpu time.Duration
}

// time calls closeFn, failing b on its error, and adds its times.
func (c *closeTimes) time(b *testing.B, closeFn func() error) {
	start := time.Now()
	cpu0, _ := cputime.Process()
	if err := closeFn(); err != nil {
		b.Fatal(err)
	}
	c.wall += time.Since(start)
	cpu, _ := cputime.Process()
	c.cpu += cpu - cpu0
}

// report reports the times per op: close-ns/op, and close-cpu-ns/op where
// the CPU time can be read.
func (c *closeTimes) report(b *testing.B) {
	b.ReportMetric(float64(c.wall.Nanoseconds())/float64(b.N), "close-ns/op")
	if _, ok := cputime.Process(); ok {
		b.ReportMetric(float64(c.cpu.Nanoseconds())/float64(b.N), "close-cpu-ns/op")
	}
}
