package mirror

import (
	"context"
	"fmt"
	"testing"

	"github.com/stratalog/strata"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkMirror copies 20,000 records of 100 bytes over 4 partitions to a
// kfake cluster: the mirror (read, produce and syncs in transactions of
// BatchRecords per partition), beside the baseline of a plain idempotent
// kgo producer writing the same records to the same partitions (no
// transactions, no syncs, no source reads). Each run includes creating the
// topic on a fresh cluster.
func BenchmarkMirror(b *testing.B) {
	const n, parts = 20000, 4
	s, err := strata.Open(b.TempDir(), &strata.Options{CleanerInterval: -1, RetentionCheckInterval: -1})
	require.NoError(b, err)
	defer s.Close()
	require.NoError(b, s.CreateTopic("events", strata.TopicConfig{Partitions: parts}))
	value := make([]byte, 100)
	var recs []*kgo.Record
	for i := range n {
		k := fmt.Appendf(nil, "k%d", i)
		pos, err := s.Append(context.Background(), "events", strata.Record{Key: k, Value: value})
		require.NoError(b, err)
		recs = append(recs, &kgo.Record{Key: k, Value: value, Partition: int32(pos[0].Partition)})
	}
	for _, batch := range []int{500, 5000} {
		b.Run(fmt.Sprintf("path=mirror/batch=%d", batch), func(b *testing.B) {
			b.SetBytes(n * 100)
			for range b.N {
				c := newBenchTarget(b)
				m, err := New(s, Options{Brokers: c, Topics: []string{"events"}, BatchRecords: batch})
				require.NoError(b, err)
				require.NoError(b, m.Once(context.Background()))
			}
		})
	}
	b.Run("path=kgo-produce", func(b *testing.B) {
		b.SetBytes(n * 100)
		for range b.N {
			c := newBenchTarget(b)
			cl, err := kgo.NewClient(kgo.SeedBrokers(c...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
				kgo.DefaultProduceTopic("events"), kgo.MaxBufferedRecords(2*n))
			require.NoError(b, err)
			_, err = kadm.NewClient(cl).CreateTopic(context.Background(), parts, -1, nil, "events")
			require.NoError(b, err)
			for _, r := range recs {
				r.Topic = ""
				cl.Produce(context.Background(), r, nil)
			}
			require.NoError(b, cl.Flush(context.Background()))
			cl.Close()
		}
	})
}

func newBenchTarget(b *testing.B) []string {
	b.StopTimer()
	defer b.StartTimer()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(b, err)
	b.Cleanup(c.Close)
	return c.ListenAddrs()
}
