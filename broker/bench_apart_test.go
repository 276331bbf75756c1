package broker_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkConsumeApart is BenchmarkConsume with each server in a process
// of its own (see startRawServer): a new kgo client consumes records of
// 100 B (produced beforehand with kgo's defaults, snappy) from the start,
// and client-cpu-ns/op, kgo's CPU time per record, is measured apart from
// the server's, server-cpu-ns/op.
func BenchmarkConsumeApart(b *testing.B) {
	servers := newRawServers(b)
	for _, server := range []string{"strata", "kfake", "sink"} {
		b.Run("server="+server, func(b *testing.B) {
			srv := servers.get(b, server, server)
			ctx := context.Background()
			if have := int(servers.next[server]); have < b.N {
				p, err := kgo.NewClient(kgo.SeedBrokers(srv.addr), kgo.DefaultProduceTopic(benchTopic), kgo.MaxBufferedRecords(1<<20))
				require.NoError(b, err)
				value := make([]byte, 100)
				for range b.N - have {
					p.Produce(ctx, &kgo.Record{Value: value}, nil)
				}
				require.NoError(b, p.Flush(ctx))
				p.Close()
				servers.next[server] = int64(b.N)
			}
			stop := measureRaw(b, srv)
			cl, err := kgo.NewClient(kgo.SeedBrokers(srv.addr), kgo.ConsumeTopics(benchTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			require.NoError(b, err)
			defer cl.Close()
			n := 0
			for n < b.N {
				fs := cl.PollFetches(ctx)
				fs.EachError(func(_ string, _ int32, err error) { b.Fatal(err) })
				n += fs.NumRecords()
			}
			stop(n)
		})
	}
}
