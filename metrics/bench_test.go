package metrics_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/metrics"
)

// benchStore is a store of topics x partitions with 10 records each, and
// groups that have each committed offset 5 on every partition: every
// group lags, so each scrape reads the record at every committed offset.
func benchStore(b *testing.B, topics, partitions, groups int) *strata.Store {
	now := epoch
	s := openStore(b, &now)
	ctx := context.Background()
	for i := range topics {
		name := fmt.Sprintf("topic-%d", i)
		require.NoError(b, s.CreateTopic(name, strata.TopicConfig{Partitions: partitions}))
		for p := range partitions {
			recs := make([]strata.Record, 10)
			for j := range recs {
				recs[j] = strata.Record{Key: []byte("k"), Value: []byte("value"), Timestamp: epoch}
			}
			_, err := s.AppendTo(ctx, name, p, recs...)
			require.NoError(b, err)
			for g := range groups {
				require.NoError(b, s.Commit(fmt.Sprintf("group-%d", g), name, p, 5, ""))
			}
		}
	}
	return s
}

// BenchmarkCollect measures a scrape: Collect of 100 partitions (10
// topics of 10) with 0 and 10 groups, each lagging on every partition,
// against Store.Stats alone, the floor of any scrape.
func BenchmarkCollect(b *testing.B) {
	for _, groups := range []int{0, 10} {
		s := benchStore(b, 10, 10, groups)
		b.Run(fmt.Sprintf("partitions=100/groups=%d/stats", groups), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = s.Stats()
			}
		})
		b.Run(fmt.Sprintf("partitions=100/groups=%d/collect", groups), func(b *testing.B) {
			c := metrics.NewCollector(s, nil)
			ch := make(chan prometheus.Metric, 1024)
			done := make(chan int)
			go func() {
				n := 0
				for range ch {
					n++
				}
				done <- n
			}()
			b.ReportAllocs()
			for b.Loop() {
				c.Collect(ch)
			}
			close(ch)
			n := <-done
			b.ReportMetric(float64(n)/float64(b.N), "metrics/op")
		})
	}
}

// BenchmarkAppendWhileScraped measures appends to one partition alone and
// while another goroutine scrapes the store (100 partitions, 10 groups)
// without pause: a scrape takes no lock an append needs.
func BenchmarkAppendWhileScraped(b *testing.B) {
	for _, scraped := range []bool{false, true} {
		b.Run(fmt.Sprintf("scraped=%t", scraped), func(b *testing.B) {
			s := benchStore(b, 10, 10, 10)
			reg := prometheus.NewRegistry()
			require.NoError(b, reg.Register(metrics.NewCollector(s, nil)))
			stop := make(chan struct{})
			var wg sync.WaitGroup
			if scraped {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := reg.Gather(); err != nil {
							panic(err)
						}
					}
				})
			}
			rec := strata.Record{Key: []byte("k"), Value: make([]byte, 100), Timestamp: epoch.Add(time.Second)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.AppendTo(context.Background(), "topic-0", 0, rec); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			close(stop)
			wg.Wait()
		})
	}
}
