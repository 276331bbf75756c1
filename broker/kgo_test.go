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

// TestKgoReadCommitted checks that kgo at read_committed skips an aborted
// transaction's records (by the aborted transactions a Fetch lists) and
// stops before an open one, and at read_uncommitted sees them all.
func TestKgoReadCommitted(t *testing.T) {
	s, srv := serve(t, nil)
	// Records of 100 bytes and a MaxBatchBytes of 256 make a transaction
	// write every two records before it ends.
	require.NoError(t, s.CreateTopic("payments", strata.TopicConfig{MaxBatchBytes: 256}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	value := func(v string) strata.Record { return strata.Record{Value: fmt.Appendf(nil, "%-100s", v)} }
	txn := func(id string, values ...string) *strata.Txn {
		tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: id})
		require.NoError(t, err)
		for _, v := range values {
			require.NoError(t, tx.AppendTo(ctx, "payments", 0, value(v)))
		}
		return tx
	}
	_, err := s.AppendTo(ctx, "payments", 0, value("created"))
	require.NoError(t, err)
	require.NoError(t, txn("settlement", "paid").Commit(ctx))
	require.NoError(t, txn("refunds", "refund 1", "refund 2", "refund 3").Abort(ctx))
	require.NoError(t, txn("settlement", "paid 2").Commit(ctx))
	open := txn("payouts", "payout 1", "payout 2", "payout 3")
	defer open.Abort(ctx)
	_, err = s.AppendTo(ctx, "payments", 0, value("later"))
	require.NoError(t, err)

	consume := func(iso kgo.IsolationLevel, want int) []string {
		cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.ConsumeTopics("payments"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso))
		require.NoError(t, err)
		defer cl.Close()
		var got []string
		for len(got) < want {
			fs := cl.PollFetches(ctx)
			require.NoError(t, fs.Err())
			fs.EachRecord(func(r *kgo.Record) { got = append(got, string(bytes.TrimSpace(r.Value))) })
		}
		return got
	}
	require.Equal(t, []string{"created", "paid", "paid 2"}, consume(kgo.ReadCommitted(), 3))
	require.Equal(t, []string{"created", "paid", "refund 1", "refund 2", "paid 2", "payout 1", "payout 2", "later"}, consume(kgo.ReadUncommitted(), 8))
}
