package broker_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/cputime"
)

// benchTopic is the topic the benchmarks use, of one partition.
const benchTopic = "bench"

// benchServers returns the seed address of each server the benchmarks
// compare, with the topic created: Strata's broker over a store on disk
// (SyncEvery, the default), franz-go's kfake (in memory), and a sink (see
// sink) that measures what the client costs by itself.
func benchServers(b *testing.B) map[string]string {
	s, srv := serve(b, nil)
	require.NoError(b, s.CreateTopic(benchTopic, strata.TopicConfig{}))
	fake, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, benchTopic))
	require.NoError(b, err)
	b.Cleanup(fake.Close)
	return map[string]string{"strata": srv.Addr().String(), "kfake": fake.ListenAddrs()[0], "sink": startSink(b)}
}

// measure starts a benchmark's timer and returns what stops it and
// reports, beside ns/op, records/s and the CPU time of the whole process
// (client and server) per record, cpu-ns/op, which other processes on a
// shared machine stretch less than the wall-clock time.
func measure(b *testing.B) (stop func()) {
	b.ReportAllocs()
	cpu, ok := cputime.Process()
	b.ResetTimer()
	return func() {
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		if now, ok2 := cputime.Process(); ok && ok2 {
			b.ReportMetric(float64(now-cpu)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkProduce produces records of 100 bytes with kgo, idempotent, as
// fast as it takes them (linger 10 ms, its default), and waits for every
// acknowledgement: ns/op is per record.
func BenchmarkProduce(b *testing.B) {
	for _, server := range []string{"strata", "kfake", "sink"} {
		for _, codec := range []string{"snappy", "none"} {
			b.Run(fmt.Sprintf("server=%s/compression=%s", server, codec), func(b *testing.B) {
				addr := benchServers(b)[server]
				opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(benchTopic), kgo.MaxBufferedRecords(1 << 20)}
				if codec == "none" {
					opts = append(opts, kgo.ProducerBatchCompression(kgo.NoCompression()))
				}
				cl, err := kgo.NewClient(opts...)
				require.NoError(b, err)
				defer cl.Close()
				value := make([]byte, 100)
				for i := range value {
					value[i] = "abcdefghij"[i%10]
				}
				var failed atomic.Value
				ctx := context.Background()
				b.SetBytes(int64(len(value)))
				stop := measure(b)
				for range b.N {
					cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
						if err != nil {
							failed.Store(err)
						}
					})
				}
				require.NoError(b, cl.Flush(ctx))
				stop()
				if err, _ := failed.Load().(error); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkConsume consumes records of 100 bytes (produced beforehand with
// kgo's defaults, snappy) with a new kgo client from the start: ns/op is
// per record.
func BenchmarkConsume(b *testing.B) {
	for _, server := range []string{"strata", "kfake", "sink"} {
		b.Run("server="+server, func(b *testing.B) {
			addr := benchServers(b)[server]
			ctx := context.Background()
			p, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(benchTopic), kgo.MaxBufferedRecords(1<<20))
			require.NoError(b, err)
			value := make([]byte, 100)
			for range b.N {
				p.Produce(ctx, &kgo.Record{Value: value}, nil)
			}
			require.NoError(b, p.Flush(ctx))
			p.Close()

			b.SetBytes(int64(len(value)))
			stop := measure(b)
			cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(benchTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			require.NoError(b, err)
			defer cl.Close()
			for n := 0; n < b.N; {
				fs := cl.PollFetches(ctx)
				fs.EachError(func(_ string, _ int32, err error) { b.Fatal(err) })
				n += fs.NumRecords()
			}
			stop()
		})
	}
}
