package broker

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// BenchmarkHandleProduce handles Produce requests (acks all) of one
// uncompressed batch of 100-byte records, from the decoding of the frame
// to the response: ns/op is per request, and the allocations are the
// broker's and the store's.
func BenchmarkHandleProduce(b *testing.B) {
	for _, records := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("records=%d", records), func(b *testing.B) {
			s, err := strata.Open(b.TempDir(), &strata.Options{RetentionCheckInterval: -1})
			require.NoError(b, err)
			defer s.Close()
			require.NoError(b, s.CreateTopic("events", strata.TopicConfig{}))
			srv, err := New(s, nil)
			require.NoError(b, err)
			defer srv.cancel()
			recs := make([]log.Record, records)
			for i := range recs {
				recs[i] = log.Record{Value: make([]byte, 100)}
			}
			batch, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: time.Now().UnixMilli()})
			require.NoError(b, err)
			req := kmsg.NewPtrProduceRequest()
			req.SetVersion(9)
			req.Acks = -1
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = "events"
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Records = batch
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			frame := frameOf(req)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				resp, _, err := srv.handleFrame(frame)
				if err != nil {
					b.Fatal(err)
				}
				if code := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != errNone {
					b.Fatal(code)
				}
			}
			b.StopTimer()
		})
	}
}
