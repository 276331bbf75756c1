package broker_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// TestOffsetFetchRequireStable: while a transaction holds a group's
// offset of a partition (TxnOffsetCommit, not yet ended), an OffsetFetch
// with require_stable gets UNSTABLE_OFFSET_COMMIT for that partition, v7
// and v8 alike; one without gets the offset the group has; once the
// transaction ends, both get the offset it left.
func TestOffsetFetchRequireStable(t *testing.T) {
	s, srv := serve(t, nil)
	ctx := context.Background()
	require.NoError(t, s.CreateTopic("in", strata.TopicConfig{Partitions: 2}))
	for p := range 2 {
		_, err := s.AppendTo(ctx, "in", p, strata.Record{Value: []byte("a")}, strata.Record{Value: []byte("b")})
		require.NoError(t, err)
	}
	require.NoError(t, s.Commit("g", "in", 0, 1, ""))
	require.NoError(t, s.Commit("g", "in", 1, 1, ""))
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay"})
	require.NoError(t, err)
	require.NoError(t, s.AddTxnPartitions(ctx, p))
	require.NoError(t, s.CommitTxnOffsets(ctx, p, "g", map[strata.TopicPartition]strata.OffsetAndMetadata{{Topic: "in"}: {Offset: 2}}))

	c := dial(t, srv)
	fetch := func(version int16, stable bool) (codes []int16, offsets []int64) {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.SetVersion(version)
		req.RequireStable = stable
		var parts []kmsg.OffsetFetchResponseTopicPartition
		if version < 8 {
			req.Group = "g"
			rt := kmsg.NewOffsetFetchRequestTopic()
			rt.Topic, rt.Partitions = "in", []int32{0, 1}
			req.Topics = append(req.Topics, rt)
			resp := c.roundTrip(req).(*kmsg.OffsetFetchResponse)
			require.Equal(t, int16(0), resp.ErrorCode)
			parts = resp.Topics[0].Partitions
		} else {
			rg := kmsg.NewOffsetFetchRequestGroup()
			rg.Group = "g" // null topics: every partition with an offset
			req.Groups = append(req.Groups, rg)
			resp := c.roundTrip(req).(*kmsg.OffsetFetchResponse)
			require.Equal(t, int16(0), resp.Groups[0].ErrorCode)
			for _, sp := range resp.Groups[0].Topics[0].Partitions {
				parts = append(parts, kmsg.OffsetFetchResponseTopicPartition{Partition: sp.Partition, Offset: sp.Offset, ErrorCode: sp.ErrorCode})
			}
		}
		require.Len(t, parts, 2)
		for _, sp := range parts {
			codes, offsets = append(codes, sp.ErrorCode), append(offsets, sp.Offset)
		}
		return codes, offsets
	}
	for _, v := range []int16{7, 8} {
		codes, offsets := fetch(v, true)
		require.Equal(t, []int16{88, 0}, codes, "v%d: UNSTABLE_OFFSET_COMMIT for the partition the transaction holds", v)
		require.Equal(t, []int64{-1, 1}, offsets)
		codes, offsets = fetch(v, false)
		require.Equal(t, []int16{0, 0}, codes, "v%d", v)
		require.Equal(t, []int64{1, 1}, offsets, "v%d: the group's offsets", v)
	}
	require.NoError(t, s.EndTxn(ctx, p, true))
	for _, v := range []int16{7, 8} {
		codes, offsets := fetch(v, true)
		require.Equal(t, []int16{0, 0}, codes, "v%d", v)
		require.Equal(t, []int64{2, 1}, offsets, "v%d: the transaction's offset", v)
	}
}

// TestKgoRequireStable: a kgo group consumer (which always asks for stable
// offsets) that joins while a transaction holds its group's offset waits
// for the transaction to end and starts from the offset it committed,
// reading nothing the transaction consumed.
func TestKgoRequireStable(t *testing.T) {
	s, srv := serve(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, s.CreateTopic("in", strata.TopicConfig{}))
	for _, v := range []string{"a", "b", "c", "d"} {
		_, err := s.AppendTo(ctx, "in", 0, strata.Record{Value: []byte(v)})
		require.NoError(t, err)
	}
	require.NoError(t, s.Commit("g", "in", 0, 1, ""))
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay"})
	require.NoError(t, err)
	require.NoError(t, s.AddTxnPartitions(ctx, p))
	require.NoError(t, s.CommitTxnOffsets(ctx, p, "g", map[strata.TopicPartition]strata.OffsetAndMetadata{{Topic: "in"}: {Offset: 3}}))

	var offsetFetches atomic.Int32
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("in"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.WithHooks(offsetFetchCounter{&offsetFetches}))
	require.NoError(t, err)
	defer cl.Close()
	got := make(chan string, 4)
	go func() {
		for ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got <- string(r.Value) })
		}
	}()
	// kgo asks for its offsets again only when the answer was
	// UNSTABLE_OFFSET_COMMIT, so a second OffsetFetch shows the first
	// refused.
	eventually(t, "a second OffsetFetch", func() bool { return offsetFetches.Load() >= 2 })
	select {
	case v := <-got:
		t.Fatalf("read %q while the transaction held the group's offset", v)
	default:
	}
	require.NoError(t, s.EndTxn(ctx, p, true))
	select {
	case v := <-got:
		require.Equal(t, "d", v, "from the transaction's offset")
	case <-ctx.Done():
		t.Fatal("nothing read")
	}
}

// offsetFetchCounter is a kgo hook that counts the OffsetFetch responses
// the client reads.
type offsetFetchCounter struct{ n *atomic.Int32 }

func (c offsetFetchCounter) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == int16(kmsg.OffsetFetch) && err == nil {
		c.n.Add(1)
	}
}
