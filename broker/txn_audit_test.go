package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// TestTxnSequences: in a transaction, a retry of a batch is answered with
// its first offset and written once, a gap in the sequence is
// OUT_OF_ORDER_SEQUENCE_NUMBER and writes nothing, and the transaction
// commits what was written once.
func TestTxnSequences(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	w := newWireTxn(t, dial(t, srv), "tx")
	w.add("events", 0)
	code, off := w.produce("events", 0, 0, "a", "b")
	require.Equal(t, int16(0), code)
	require.Equal(t, int64(0), off)
	code, off = w.produce("events", 0, 0, "a", "b")
	require.Equal(t, int16(0), code, "a retry")
	require.Equal(t, int64(0), off, "the retry's offset is the first's")
	code, _ = w.produce("events", 0, 5, "x")
	require.Equal(t, int16(45), code, "OUT_OF_ORDER_SEQUENCE_NUMBER")
	code, _ = w.produce("events", 0, 1, "x")
	require.Equal(t, int16(45), code, "OUT_OF_ORDER_SEQUENCE_NUMBER: inside the last batch")
	code, off = w.produce("events", 0, 2, "c")
	require.Equal(t, int16(0), code)
	require.Equal(t, int64(2), off)
	require.Equal(t, int16(0), w.end(true))
	require.Equal(t, []string{"a", "b", "c"}, storeValues(t, s, "events", strata.ReadCommitted))
	// The next transaction of the epoch goes on with the sequence.
	w.add("events", 0)
	code, _ = w.produce("events", 0, 0, "again")
	require.NotEqual(t, int16(0), code, "sequence 0 again at the epoch")
	code, _ = w.produce("events", 0, 3, "d")
	require.Equal(t, int16(0), code)
	require.Equal(t, int16(0), w.end(true))
	require.Equal(t, []string{"a", "b", "c", "d"}, storeValues(t, s, "events", strata.ReadCommitted))
}

// TestTxnInterleavedAborts: two producers' transactions interleave their
// batches on one partition, with plain records between, and one of them
// aborts, again and again; kgo's read_committed consumer, made to fetch a
// batch at a time so that its fetches start inside the transactions, sees
// every committed and plain record once and no aborted one, in order.
func TestTxnInterleavedAborts(t *testing.T) {
	s, srv := serve(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	a, b := newWireTxn(t, dial(t, srv), "a"), newWireTxn(t, dial(t, srv), "b")
	var want []string
	seqA, seqB := int32(0), int32(0)
	for round := range 10 {
		a.add("events", 0)
		b.add("events", 0)
		for i := range 3 {
			va, vb := fmt.Sprintf("a%d.%d", round, i), fmt.Sprintf("b%d.%d", round, i)
			code, _ := a.produce("events", 0, seqA, va)
			require.Equal(t, int16(0), code)
			code, _ = b.produce("events", 0, seqB, vb)
			require.Equal(t, int16(0), code)
			seqA, seqB = seqA+1, seqB+1
			if round%2 == 0 {
				want = append(want, vb)
			} else {
				want = append(want, va)
			}
		}
		plain := fmt.Sprintf("p%d", round)
		_, err := s.AppendTo(ctx, "events", 0, strata.Record{Value: []byte(plain)})
		require.NoError(t, err)
		// The plain record is after every batch of the round.
		want = append(want, plain)
		require.Equal(t, int16(0), a.end(round%2 == 1))
		require.Equal(t, int16(0), b.end(round%2 == 0))
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.ConsumeTopics("events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxBytes(1), kgo.FetchMaxPartitionBytes(1))
	require.NoError(t, err)
	defer cl.Close()
	var got []string
	for len(got) < len(want) {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "got %v", got)
		fs.EachError(func(topic string, p int32, err error) { require.NoError(t, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	require.Equal(t, want, got)
}

// TestTxnFencingRace: producers of four transactional ids run
// transactions of two partitions while a second producer of each id
// keeps fencing the first (InitProducerId), all at once; every
// transaction whose EndTxn commit was answered NONE is there whole under
// read_committed, and none other is there at all; nothing is left open.
func TestTxnFencingRace(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 2}))
	type result struct {
		committed map[string]bool
		tried     int
	}
	results := make(chan result, 8)
	run := func(id string, rounds int) {
		c := dial(t, srv)
		res := result{committed: map[string]bool{}}
		defer func() { results <- res }()
		var pid int64
		var epoch int16
		seq := map[int32]int32{}
		init := func() bool {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.SetVersion(4)
			req.TransactionalID, req.TransactionTimeoutMillis = &id, 60000
			req.ProducerID, req.ProducerEpoch = -1, -1
			resp := c.roundTrip(req).(*kmsg.InitProducerIDResponse)
			if resp.ErrorCode != 0 {
				return false
			}
			pid, epoch, seq = resp.ProducerID, resp.ProducerEpoch, map[int32]int32{}
			return true
		}
		for !init() {
		}
		for r := range rounds {
			w := &wireTxn{t: t, c: c, id: id, pid: pid, epoch: epoch}
			req := kmsg.NewPtrAddPartitionsToTxnRequest()
			req.SetVersion(3)
			req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = "events", []int32{0, 1}
			req.Topics = append(req.Topics, rt)
			if c.roundTrip(req).(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode != 0 {
				for !init() {
				}
				continue
			}
			res.tried++
			ok := true
			var values []string
			for part := range int32(2) {
				v := fmt.Sprintf("%s.%d.%d.%d", id, epoch, r, part)
				code, _ := w.produce("events", part, seq[part], v)
				if code != 0 {
					ok = false
					break
				}
				seq[part]++
				values = append(values, v)
			}
			code := w.end(ok)
			if ok && code == 0 {
				for _, v := range values {
					res.committed[v] = true
				}
			}
			if code != 0 {
				for !init() {
				}
			}
		}
	}
	for i := range 4 {
		id := fmt.Sprintf("id%d", i)
		go run(id, 30)
		go run(id, 30)
	}
	want := map[string]bool{}
	tried := 0
	for range 8 {
		res := <-results
		tried += res.tried
		for v := range res.committed {
			want[v] = true
		}
	}
	require.NotEmpty(t, want)
	t.Logf("%d of %d transactions' records committed", len(want)/2, tried)
	got := map[string]bool{}
	for _, v := range storeValues(t, s, "events", strata.ReadCommitted) {
		require.False(t, got[v], "%s twice", v)
		got[v] = true
	}
	require.Equal(t, want, got)
	states, err := s.Transactions(context.Background())
	require.NoError(t, err)
	for _, st := range states {
		require.NotEqual(t, "Ongoing", st.State, st.ID)
	}
	for p := range 2 {
		lso, err := s.View(strata.ReadCommitted).ListOffsets("events", p, strata.Latest)
		require.NoError(t, err)
		hw, err := s.View(strata.ReadUncommitted).ListOffsets("events", p, strata.Latest)
		require.NoError(t, err)
		require.Equal(t, hw, lso, "partition %d: nothing open", p)
	}
}
