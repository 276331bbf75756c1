package broker

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// BenchmarkFetchIdlePartitions answers a full Fetch (no session) of
// partitions that have nothing new, as a consumer of many quiet partitions
// sends one each time any of them gets data: decoding the request,
// reading each partition and encoding the response. ns/op is per
// partition; it bounds what fetch sessions (KIP-227), which leave
// unchanged partitions out of requests and responses, could save.
func BenchmarkFetchIdlePartitions(b *testing.B) {
	for _, parts := range []int{100, 1000} {
		b.Run(fmt.Sprintf("partitions=%d", parts), func(b *testing.B) {
			s, err := strata.Open(b.TempDir(), &strata.Options{RetentionCheckInterval: -1})
			require.NoError(b, err)
			defer s.Close()
			require.NoError(b, s.CreateTopic("quiet", strata.TopicConfig{Partitions: parts}))
			srv, err := New(s, nil)
			require.NoError(b, err)
			defer srv.cancel()
			req := kmsg.NewPtrFetchRequest()
			req.SetVersion(12)
			req.MaxBytes, req.MaxWaitMillis, req.MinBytes = 50<<20, 0, 1
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = "quiet"
			for p := range parts {
				_, err := s.AppendTo(context.Background(), "quiet", p, strata.Record{Value: []byte("v")})
				require.NoError(b, err)
				rp := kmsg.NewFetchRequestTopicPartition()
				rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = int32(p), 1, 1<<20
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
			frame := frameOf(req)
			var f frameBuffers
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				resp, _, err := srv.handleFrame(frame)
				if err != nil {
					b.Fatal(err)
				}
				fr := resp.(*fetchResponse)
				if !appendFetchFrame(&f, 1, fr.FetchResponse) {
					b.Fatal("not encoded")
				}
				fr.release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*parts), "ns/partition")
			b.ReportMetric(float64(len(frame)+len(f.head))/float64(parts), "bytes/partition")
		})
	}
}
