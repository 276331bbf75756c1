package strata_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratalog/strata"
)

// BenchmarkAppendIfEnd appends 100 B records under SyncNever to a topic's
// single partition, one per call and in batches of 100, with AppendIfEnd
// (the writer knows the end: every append succeeds) beside AppendTo in the
// same run, so the check's cost is a ratio. writers=4 runs four goroutines
// that each read the end with ListOffsets and append at it, retrying when
// another got there first: a contended read-modify-write, whose
// retries/op says how many attempts lost.
func BenchmarkAppendIfEnd(b *testing.B) {
	for _, n := range []int{1, 100} {
		recs := benchRecs(n)
		size := benchBatchSize(b, recs)
		open := func(b *testing.B) *strata.Store {
			s := benchOpenStore(b, b.TempDir())
			b.Cleanup(func() { s.Close() })
			if err := s.CreateTopic(benchTopic, strata.TopicConfig{}); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(size)
			b.ReportAllocs()
			return s
		}
		b.Run(fmt.Sprintf("api=AppendTo/records=%d", n), func(b *testing.B) {
			s := open(b)
			for b.Loop() {
				if _, err := s.AppendTo(benchCtx, benchTopic, 0, recs...); err != nil {
					b.Fatal(err)
				}
			}
			benchRecordsPerSec(b, n)
		})
		b.Run(fmt.Sprintf("api=AppendIfEnd/records=%d", n), func(b *testing.B) {
			s := open(b)
			end := int64(0)
			for b.Loop() {
				if _, err := s.AppendIfEnd(benchCtx, benchTopic, 0, end, recs...); err != nil {
					b.Fatal(err)
				}
				end += int64(n)
			}
			benchRecordsPerSec(b, n)
		})
		b.Run(fmt.Sprintf("api=AppendIfEnd/records=%d/writers=4", n), func(b *testing.B) {
			s := open(b)
			var retries atomic.Int64
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					for {
						end, err := s.ListOffsets(benchTopic, 0, strata.Latest)
						if err != nil {
							b.Error(err)
							return
						}
						_, err = s.AppendIfEnd(benchCtx, benchTopic, 0, end, recs...)
						if err == nil {
							break
						}
						if !errors.Is(err, strata.ErrWrongOffset) {
							b.Error(err)
							return
						}
						retries.Add(1)
					}
				}
			})
			b.ReportMetric(float64(retries.Load())/float64(b.N), "retries/op")
			benchRecordsPerSec(b, n)
		})
	}
}

// BenchmarkAppendIfLast appends one 100 B record at a time under SyncNever
// to a topic's single partition that already holds records=N records over
// N/10 keys: AppendIfLast of an existing key (with its last offset, so
// every append succeeds) beside AppendTo in the same run, on the same
// partition. A check is a map lookup, whatever N; build-ms is what the
// first AppendIfLast after Open cost, which read the partition to build
// the key index. index=built is AppendTo once the index is built, when
// every append enters its keys.
func BenchmarkAppendIfLast(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			keys := n / 10
			dir := b.TempDir()
			s := benchOpenStore(b, dir)
			if err := s.CreateTopic(benchTopic, strata.TopicConfig{}); err != nil {
				b.Fatal(err)
			}
			batch := make([]strata.Record, benchFill)
			for i := 0; i < n; i += benchFill {
				for j := range batch {
					batch[j] = strata.Record{Key: fmt.Appendf(nil, "k%07d", (i+j)%keys), Value: make([]byte, 100)}
				}
				if _, err := s.AppendTo(benchCtx, benchTopic, 0, batch...); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			s = benchOpenStore(b, dir)
			defer s.Close()
			last := make([]int64, keys)
			for k := range last {
				last[k] = int64(n - keys + k)
			}
			names := make([][]byte, keys)
			for k := range names {
				names[k] = fmt.Appendf(nil, "k%07d", k)
			}
			key := func(i int) []byte { return names[i%keys] }
			value := make([]byte, 100)
			rec := strata.Record{Key: key(0), Value: value}
			size := benchBatchSize(b, []strata.Record{rec})

			b.Run("api=AppendTo", func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := s.AppendTo(benchCtx, benchTopic, 0, strata.Record{Key: key(i), Value: value}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			// The AppendTo runs appended records of keys 0, 1, ...: find
			// the last offsets again with the index the first call builds.
			var buildMs float64
			b.Run("api=AppendIfLast", func(b *testing.B) {
				if buildMs == 0 {
					start := time.Now()
					_, err := s.AppendIfLast(benchCtx, benchTopic, key(0), 0, strata.Record{Key: key(0), Value: value})
					var wrong *strata.WrongOffsetError
					if !errors.As(err, &wrong) {
						b.Fatal(err)
					}
					buildMs = float64(time.Since(start).Microseconds()) / 1000
					for k := range last {
						off, err := s.AppendIfLast(benchCtx, benchTopic, key(k), strata.NoOffset, strata.Record{Key: key(k), Value: value})
						if !errors.As(err, &wrong) {
							b.Fatal(err, off)
						}
						last[k] = wrong.Actual
					}
				}
				b.SetBytes(size)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					k := i % keys
					off, err := s.AppendIfLast(benchCtx, benchTopic, key(k), last[k], strata.Record{Key: key(k), Value: value})
					if err != nil {
						b.Fatal(err)
					}
					last[k] = off
					i++
				}
				b.ReportMetric(buildMs, "build-ms")
			})
			// AppendTo again, now that every append enters its key.
			b.Run("api=AppendTo/index=built", func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := s.AppendTo(benchCtx, benchTopic, 0, strata.Record{Key: key(i), Value: value}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
	}
}
