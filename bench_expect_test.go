package strata_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

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
