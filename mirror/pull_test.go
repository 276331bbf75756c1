package mirror

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stratalog/strata"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceToCluster writes n records to each partition of topic on the
// cluster, in transactions of which every third aborts, and returns the
// committed ones per partition.
func produceToCluster(t *testing.T, brokers []string, topic string, parts, n, from int) [][]*kgo.Record {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.TransactionalID("app"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(topic))
	require.NoError(t, err)
	defer cl.Close()
	if from == 0 {
		_, err := kadm.NewClient(cl).CreateTopic(ctx, int32(parts), -1, nil, topic)
		require.NoError(t, err)
	}
	out := make([][]*kgo.Record, parts)
	for i := from; i < from+n; i++ {
		require.NoError(t, cl.BeginTransaction())
		var txn []*kgo.Record
		for p := range parts {
			r := &kgo.Record{Partition: int32(p), Key: fmt.Appendf(nil, "k%d", i%7),
				Value: fmt.Appendf(nil, "v%d-%d", i, p), Timestamp: time.UnixMilli(tsBase + int64(i)),
				Headers: []kgo.RecordHeader{{Key: "i", Value: fmt.Appendf(nil, "%d", i)}}}
			txn = append(txn, r)
		}
		require.NoError(t, cl.ProduceSync(ctx, txn...).FirstErr())
		commit := i%3 != 2
		require.NoError(t, cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)))
		if commit {
			for _, r := range txn {
				out[r.Partition] = append(out[r.Partition], r)
			}
		}
	}
	return out
}

func requirePulled(t *testing.T, s *strata.Store, topic string, want [][]*kgo.Record) {
	t.Helper()
	got := sourceRecords(t, s, topic)
	require.Len(t, got, len(want))
	for p := range want {
		require.Equal(t, len(want[p]), len(got[p]), "%s/%d: records in the store", topic, p)
		for i, w := range want[p] {
			require.True(t, sameRecord(got[p][i], w), "%s/%d record %d: want %s, got %s", topic, p, i, fmtTarget(w), fmtSource(got[p][i]))
		}
	}
}

// Pull copies a cluster's topic into a store, committed records only, to
// the same partitions with keys, values, headers and timestamps; a Pull
// cancelled at random points resumes without a record lost or doubled.
func TestPull(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	c := newTarget(t)
	s := newSource(t)
	want := produceToCluster(t, c.ListenAddrs(), "remote", 3, 30, 0)

	parts, err := Pull(ctx, s, PullOptions{Brokers: c.ListenAddrs(), Topics: []string{"remote"},
		Rename: func(t string) string { return "local." + t }})
	require.NoError(t, err)
	require.Len(t, parts, 3)
	for _, p := range parts {
		require.Equal(t, p.End, p.Next, "%+v", p)
		require.Equal(t, int64(20), p.Copied)
	}
	requirePulled(t, s, "local.remote", want)

	// Nothing new: nothing copied. Then more, pulled by Pulls cancelled
	// at random moments.
	parts, err = Pull(ctx, s, PullOptions{Brokers: c.ListenAddrs(), Topics: []string{"remote"},
		Rename: func(t string) string { return "local." + t }})
	require.NoError(t, err)
	require.Zero(t, parts[0].Copied)
	more := produceToCluster(t, c.ListenAddrs(), "remote", 3, 300, 30)
	for p := range want {
		want[p] = append(want[p], more[p]...)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		pctx, cancel := context.WithTimeout(ctx, time.Duration(rng.IntN(20))*time.Millisecond)
		_, _ = Pull(pctx, s, PullOptions{Brokers: c.ListenAddrs(), Topics: []string{"remote"}, BatchRecords: 7,
			Rename: func(t string) string { return "local." + t }})
		cancel()
	}
	_, err = Pull(ctx, s, PullOptions{Brokers: c.ListenAddrs(), Topics: []string{"remote"},
		Rename: func(t string) string { return "local." + t }})
	require.NoError(t, err)
	requirePulled(t, s, "local.remote", want)

	_, err = Pull(ctx, s, PullOptions{Brokers: c.ListenAddrs(), Topics: []string{"nosuch"}})
	require.ErrorIs(t, err, strata.ErrUnknownTopic)
	_, err = Pull(ctx, s, PullOptions{Topics: []string{"remote"}})
	require.ErrorIs(t, err, ErrInvalidOptions)
}
