package broker_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// TestKgoProduceConsume produces with kgo's defaults (idempotent, snappy,
// acks all) and consumes the records back, and checks that the batches
// are stored as they came: snappy, with the producer id.
func TestKgoProduceConsume(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 3}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.DefaultProduceTopic("events"))
	require.NoError(t, err)
	defer cl.Close()
	const n = 1000
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Key: fmt.Appendf(nil, "key-%d", i%17), Value: fmt.Appendf(nil, "value %d, compressible compressible compressible", i)}
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())

	var total int64
	for p := range 3 {
		end, err := s.ListOffsets("events", p, strata.Latest)
		require.NoError(t, err)
		total += end
		b, err := s.View(strata.ReadUncommitted).ReadBatches("events", p, 0, 1<<20, nil)
		require.NoError(t, err)
		if len(b) == 0 {
			continue
		}
		h, err := log.ReadHeader(b)
		require.NoError(t, err)
		require.Equal(t, log.Snappy, h.Compression())
		require.GreaterOrEqual(t, h.ProducerID, int64(0), "idempotent")
	}
	require.Equal(t, int64(n), total)

	consumer, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.ConsumeTopics("events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer consumer.Close()
	got := map[string]bool{}
	for len(got) < n {
		fs := consumer.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		fs.EachError(func(topic string, p int32, err error) { require.NoError(t, err, "%s-%d", topic, p) })
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)] = true })
	}
	for _, r := range recs {
		require.True(t, got[string(r.Value)], "%s", r.Value)
	}
}

// TestKgoUnknownTopic checks that kgo sees UNKNOWN_TOPIC_OR_PARTITION
// for a topic the store does not have.
func TestKgoUnknownTopic(t *testing.T) {
	_, srv := serve(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.UnknownTopicRetries(0))
	require.NoError(t, err)
	defer cl.Close()
	err = cl.ProduceSync(ctx, &kgo.Record{Topic: "missing", Value: []byte("v")}).FirstErr()
	require.ErrorIs(t, err, kerr.UnknownTopicOrPartition)
}

// TestLogAppendTime checks that a LogAppendTime topic's append time is in
// the Produce response and on the records kgo consumes.
func TestLogAppendTime(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("stamped", strata.TopicConfig{TimestampType: strata.LogAppendTime}))
	require.NoError(t, s.CreateTopic("created", strata.TopicConfig{}))
	old := time.Now().Add(-time.Hour)
	b, err := log.EncodeBatch(nil, []strata.Record{{Value: []byte("v"), Timestamp: old}}, log.BatchOptions{Now: old.UnixMilli()})
	require.NoError(t, err)
	c := dial(t, srv)
	resp := c.roundTrip(produceReq("stamped", bytes.Clone(b))).(*kmsg.ProduceResponse)
	p := resp.Topics[0].Partitions[0]
	require.Equal(t, int16(0), p.ErrorCode)
	got, err := s.Get("stamped", 0, 0)
	require.NoError(t, err)
	require.Equal(t, got.Timestamp.UnixMilli(), p.LogAppendTime)
	require.Greater(t, p.LogAppendTime, old.Add(time.Minute).UnixMilli())
	resp = c.roundTrip(produceReq("created", b)).(*kmsg.ProduceResponse)
	require.Equal(t, int64(-1), resp.Topics[0].Partitions[0].LogAppendTime)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.ConsumeTopics("stamped"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	fs := cl.PollFetches(ctx)
	require.NoError(t, fs.Err())
	require.Equal(t, p.LogAppendTime, fs.Records()[0].Timestamp.UnixMilli())
}
