package strata_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/cputime"
)

// BenchmarkProducer produces 100 B records (8-byte keys over 1024 keys,
// routed to 4 partitions) from 1 and 8 goroutines under SyncNever: the
// lingering Producer (default options, Flush at the end, inside the
// timing), idempotent (the default: every batch stamped with its producer
// id and sequence and checked against the partition's producer state) and
// with DisableIdempotence, beside Store.Append and AppendTo of one record
// per call, in the same run. cpu-ns/op is the CPU time the process used
// per record (all its goroutines), which other processes on a shared
// machine stretch less than the wall-clock time.
//
//	go test -run '^$' -bench BenchmarkProducer -count 6 . | tee new.txt
func BenchmarkProducer(b *testing.B) {
	const topicName, parts, keys = "bench", 4, 1024
	recs := make([]strata.Record, keys)
	for i := range recs {
		recs[i] = strata.Record{Key: fmt.Appendf(nil, "k%07d", i), Value: make([]byte, 100)}
	}
	open := func(b *testing.B) *strata.Store {
		s, err := strata.Open(b.TempDir(), &strata.Options{Sync: strata.SyncNever, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		if err := s.CreateTopic(topicName, strata.TopicConfig{Partitions: parts}); err != nil {
			b.Fatal(err)
		}
		return s
	}
	// run calls produce(i) for i in [0, b.N) from g goroutines, each taking
	// a contiguous share, then finish, and reports records/s.
	run := func(b *testing.B, g int, produce func(i int) error, finish func() error) {
		b.SetBytes(int64(len(recs[0].Key) + len(recs[0].Value)))
		b.ReportAllocs()
		b.ResetTimer()
		cpu0, cpuOK := cputime.Process()
		var wg sync.WaitGroup
		errs := make(chan error, g)
		for w := range g {
			lo, hi := b.N*w/g, b.N*(w+1)/g
			wg.Go(func() {
				for i := lo; i < hi; i++ {
					if err := produce(i); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		if err := finish(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu1, _ := cputime.Process()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		if cpuOK {
			b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
		}
	}
	ctx := context.Background()
	for _, g := range []int{1, 8} {
		for _, idem := range []string{"on", "off"} {
			b.Run(fmt.Sprintf("api=producer/idempotence=%s/goroutines=%d", idem, g), func(b *testing.B) {
				s := open(b)
				p := s.Producer(strata.ProducerOptions{DisableIdempotence: idem == "off"})
				defer p.Close()
				run(b, g, func(i int) error {
					return p.Produce(ctx, topicName, recs[i%keys], nil)
				}, func() error { return p.Flush(ctx) })
			})
		}
		b.Run(fmt.Sprintf("api=append/goroutines=%d", g), func(b *testing.B) {
			s := open(b)
			run(b, g, func(i int) error {
				_, err := s.Append(ctx, topicName, recs[i%keys])
				return err
			}, func() error { return nil })
		})
		b.Run(fmt.Sprintf("api=appendto/goroutines=%d", g), func(b *testing.B) {
			s := open(b)
			run(b, g, func(i int) error {
				_, err := s.AppendTo(ctx, topicName, i%parts, recs[i%keys])
				return err
			}, func() error { return nil })
		})
	}
}
