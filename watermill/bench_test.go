package watermill_test

import (
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"
	"github.com/stretchr/testify/require"

	stratawm "github.com/stratalog/strata/watermill"
)

// BenchmarkSubscriber runs Watermill's BenchSubscriber (publish b.N
// messages one Publish each, while one subscription reads and acks them)
// on Strata, with a group (each Ack a commit) and without, beside
// Watermill's in-memory gochannel Pub/Sub as watermill's own benchmark
// sets it up (an output buffer of b.N, not persistent).
func BenchmarkSubscriber(b *testing.B) {
	b.Run("pubsub=gochannel", func(b *testing.B) {
		b.ReportAllocs()
		tests.BenchSubscriber(b, func(n int) (message.Publisher, message.Subscriber) {
			ps := gochannel.NewGoChannel(gochannel.Config{OutputChannelBuffer: int64(n)}, watermill.NopLogger{})
			b.Cleanup(func() { require.NoError(b, ps.Close()) })
			return ps, ps
		})
	})
	for _, bc := range []struct{ name, group string }{
		{"pubsub=strata-nogroup", ""},
		{"pubsub=strata-group", "bench"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			tests.BenchSubscriber(b, func(int) (message.Publisher, message.Subscriber) {
				st := openStore(b)
				pub, err := stratawm.NewPublisher(st, stratawm.PublisherConfig{}, nil)
				require.NoError(b, err)
				sub, err := stratawm.NewSubscriber(st, stratawm.SubscriberConfig{ConsumerGroup: bc.group}, nil)
				require.NoError(b, err)
				b.Cleanup(func() {
					require.NoError(b, pub.Close())
					require.NoError(b, sub.Close())
				})
				return pub, sub
			})
		})
	}
}
