package strata_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// relayRig is a store with topics in (one record, A) and out, and a
// consumer of group g that polled A.
type relayRig struct {
	s   *strata.Store
	clk *fakeClock
	c1  *strata.Consumer
	a   strata.Message
}

func newRelayRig(t *testing.T) relayRig {
	clk := newFakeClock()
	s := stratatest.Open(t, &strata.Options{Now: clk.Now, SessionTimeout: 10 * time.Second, Isolation: strata.ReadCommitted})
	require.NoError(t, s.CreateTopic("in", strata.TopicConfig{Partitions: 1}))
	require.NoError(t, s.CreateTopic("out", strata.TopicConfig{Partitions: 1}))
	_, err := s.AppendTo(ctx, "in", 0, rec("k", "A"))
	require.NoError(t, err)
	c1, err := s.Consumer("g", []string{"in"}, relayConsumerOpts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c1.Close() })
	msgs := pollN(t, c1, 1)
	return relayRig{s: s, clk: clk, c1: c1, a: msgs[0]}
}

var relayConsumerOpts = strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, PollWait: time.Millisecond}

// pollN polls c until it returned n messages.
func pollN(t *testing.T, c *strata.Consumer, n int) []strata.Message {
	t.Helper()
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out []strata.Message
	for len(out) < n {
		msgs, err := c.Poll(pctx)
		require.NoError(t, err)
		out = append(out, msgs...)
	}
	return out
}

// takeOver evicts c1 (its session expires) and has a second consumer of
// the group take its partition, read A again and relay it in a
// transaction of its own, with its offset.
func (r relayRig) takeOver(t *testing.T) {
	c2, err := r.s.Consumer("g", []string{"in"}, relayConsumerOpts)
	require.NoError(t, err)
	defer c2.Close()
	r.clk.Add(11 * time.Second)
	msgs := pollN(t, c2, 1)
	require.Equal(t, r.a.Offset, msgs[0].Offset, "the new owner reads A again")
	t2, err := r.s.BeginTxn(ctx, strata.TxnOptions{ID: "instance-2"})
	require.NoError(t, err)
	require.NoError(t, t2.AppendTo(ctx, "out", 0, rec("k", "from-2")))
	require.NoError(t, t2.CommitConsumerOffsets(ctx, c2, map[strata.TopicPartition]int64{{Topic: "in", Partition: 0}: msgs[0].Offset + 1}))
	require.NoError(t, t2.Commit(ctx))
}

func (r relayRig) out(t *testing.T) []string {
	var out []string
	for rec, err := range r.s.Scan("out", 0, 0) {
		require.NoError(t, err)
		out = append(out, string(rec.Value))
	}
	return out
}

// TestTxnConsumerOffsetsFenceAnEvictedConsumer: a relay instance whose
// consumer is evicted while its transaction is open (a stall past the
// session timeout) cannot commit it once another instance took the
// partition over and relayed the same record: Commit checks the
// consumer's generation as it writes the offsets, fails with ErrFenced
// and aborts, so the record is relayed once.
func TestTxnConsumerOffsetsFenceAnEvictedConsumer(t *testing.T) {
	r := newRelayRig(t)
	t1, err := r.s.BeginTxn(ctx, strata.TxnOptions{ID: "instance-1"})
	require.NoError(t, err)
	require.NoError(t, t1.AppendTo(ctx, "out", 0, rec("k", "from-1")))
	require.NoError(t, t1.CommitConsumerOffsets(ctx, r.c1, map[strata.TopicPartition]int64{{Topic: "in", Partition: 0}: r.a.Offset + 1}))

	r.takeOver(t)
	err = t1.Commit(ctx)
	require.ErrorIs(t, err, strata.ErrFenced)
	require.Equal(t, []string{"from-2"}, r.out(t), "A relayed once")
	om, ok := r.s.Committed("g", "in", 0)
	require.True(t, ok)
	require.Equal(t, r.a.Offset+1, om.Offset)
	require.ErrorIs(t, t1.Abort(ctx), strata.ErrTxnDone, "Commit ended it")
}

// TestTxnConsumerOffsetsOfAFencedConsumer: a consumer already evicted when
// its offsets are added aborts the transaction at once.
func TestTxnConsumerOffsetsOfAFencedConsumer(t *testing.T) {
	r := newRelayRig(t)
	t1, err := r.s.BeginTxn(ctx, strata.TxnOptions{ID: "instance-1"})
	require.NoError(t, err)
	require.NoError(t, t1.AppendTo(ctx, "out", 0, rec("k", "from-1")))
	r.takeOver(t)
	err = t1.CommitConsumerOffsets(ctx, r.c1, map[strata.TopicPartition]int64{{Topic: "in", Partition: 0}: r.a.Offset + 1})
	require.ErrorIs(t, err, strata.ErrFenced)
	require.ErrorIs(t, t1.Commit(ctx), strata.ErrFenced, "aborted: every later call says why")
	require.Equal(t, []string{"from-2"}, r.out(t))
}

// TestTxnConsumerOffsetsChecked: bad input to CommitConsumerOffsets
// changes nothing, and a consumer that stays the owner commits.
func TestTxnConsumerOffsetsChecked(t *testing.T) {
	r := newRelayRig(t)
	tx, err := r.s.BeginTxn(ctx, strata.TxnOptions{ID: "instance-1"})
	require.NoError(t, err)
	require.NoError(t, tx.AppendTo(ctx, "out", 0, rec("k", "from-1")))
	for name, tc := range map[string]struct {
		c    *strata.Consumer
		offs map[strata.TopicPartition]int64
		want error
	}{
		"no consumer":       {nil, nil, strata.ErrInvalidConfig},
		"not subscribed":    {r.c1, map[strata.TopicPartition]int64{{Topic: "out", Partition: 0}: 0}, strata.ErrNotOwner},
		"past the end":      {r.c1, map[strata.TopicPartition]int64{{Topic: "in", Partition: 0}: 99}, strata.ErrOffsetOutOfRange},
		"unknown partition": {r.c1, map[strata.TopicPartition]int64{{Topic: "in", Partition: 7}: 0}, strata.ErrUnknownPartition},
	} {
		require.ErrorIs(t, tx.CommitConsumerOffsets(ctx, tc.c, tc.offs), tc.want, name)
	}
	require.NoError(t, tx.CommitConsumerOffsets(ctx, r.c1, map[strata.TopicPartition]int64{{Topic: "in", Partition: 0}: r.a.Offset + 1}))
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, []string{"from-1"}, r.out(t))
	om, ok := r.s.Committed("g", "in", 0)
	require.True(t, ok)
	require.Equal(t, r.a.Offset+1, om.Offset)
}
