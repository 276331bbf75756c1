package metrics_test

import (
	"context"
	"fmt"
	"testing"

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
