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
// partition, beside the same in a fetch session (KIP-227), whose
// incremental fetches leave unchanged partitions out of requests and
// responses.
func BenchmarkFetchIdlePartitions(b *testing.B) {
	for _, parts := range []int{100, 1000} {
		for _, session := range []bool{false, true} {
			b.Run(fmt.Sprintf("partitions=%d/session=%v", parts, session), func(b *testing.B) {
				fetchIdle(b, parts, session)
			})
		}
	}
}

// fetchIdle is BenchmarkFetchIdlePartitions with parts partitions, full
// fetches or incremental ones in a session.
func fetchIdle(b *testing.B, parts int, session bool) {
	{
		{
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
			answer := func(frame []byte) {
				resp, _, err := srv.handleFrame(frame)
				if err != nil {
					b.Fatal(err)
				}
				fr := resp.(*fetchResponse)
				if fr.ErrorCode != errNone || !appendFetchFrame(&f, 1, fr.FetchResponse) {
					b.Fatal("not answered")
				}
				fr.release()
			}
			if session {
				req.SessionEpoch = 0
				answer(frameOf(req))
				req.SessionID, req.Topics = srv.fetchSessions.lastID, nil
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if session {
					req.SessionEpoch = int32(i + 1)
					frame = frameOf(req)
				}
				answer(frame)
			}
			b.StopTimer() // not the store's Close
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*parts), "ns/partition")
			b.ReportMetric(float64(len(frame)+len(f.head))/float64(parts), "bytes/partition")
		}
	}
}
