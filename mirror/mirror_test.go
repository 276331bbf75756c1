package mirror

import (
	"log/slog"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stratalog/strata"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Once copies topics with their partitions, configs, keys, headers and
// timestamps, skips what the source's read_committed readers skip (an
// aborted transaction, the markers, compacted records), and groups resume
// on the target at the record they would read next, gaps or not.
func TestOnceCopiesTopicsAndGroups(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	c := newTarget(t)
	s := newSource(t)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 3, Retention: time.Hour}))
	require.NoError(t, s.CreateTopic("users", strata.TopicConfig{Partitions: 2, CleanupPolicy: strata.CleanupCompact,
		SegmentBytes: 2048, MinCleanableDirtyRatio: 0.01}))
	appendKeyed(t, s, "orders", 0, 300, 50)
	for i := 0; i < 400; i += 10 {
		appendKeyed(t, s, "users", i, 9, 20)
		appendKeyed(t, s, "users", i+9, 1, 0) // a key written once
	}

	// An aborted and a committed transaction on orders/0.
	for _, commit := range []bool{false, true} {
		txn, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "app"})
		require.NoError(t, err)
		require.NoError(t, txn.AppendTo(ctx, "orders", 0, strata.Record{Key: []byte("t"), Value: []byte("txn")}))
		if commit {
			require.NoError(t, txn.Commit(ctx))
		} else {
			require.NoError(t, txn.Abort(ctx))
		}
	}
	st, err := s.Compact(ctx, "users")
	require.NoError(t, err)
	require.NotZero(t, st.Superseded, "compaction left gaps")
	appendKeyed(t, s, "users", 400, 10, 20)

	// Groups at offsets: the start, a compacted gap, the middle, the end.
	users := sourceRecords(t, s, "users")
	require.NoError(t, s.Commit("g1", "orders", 0, 0, "m0"))
	require.NoError(t, s.Commit("g1", "orders", 1, 57, ""))
	end2, err := s.ListOffsets("orders", 2, strata.Latest)
	require.NoError(t, err)
	require.NoError(t, s.Commit("g1", "orders", 2, end2, "end"))
	gap, gp := int64(-1), 0
	for p := range users {
		for i := 1; i < len(users[p]) && gap < 0; i++ {
			if users[p][i].Offset > users[p][i-1].Offset+1 {
				gap, gp = users[p][i-1].Offset+1, p
			}
		}
	}
	require.NotEqual(t, int64(-1), gap, "a gap in users")
	require.NoError(t, s.Commit("g1", "users", gp, gap, ""))
	require.NoError(t, s.Commit("g1", "users", 1-gp, users[1-gp][len(users[1-gp])/2].Offset, ""))
	require.NoError(t, s.Commit("other", "orders", 0, 10, ""))

	m, err := New(s, Options{
		Brokers:      c.ListenAddrs(),
		Topics:       []string{"orders"},
		TopicPattern: regexp.MustCompile("us.*"),
		Rename:       func(t string) string { return "strata." + t },
		Groups:       regexp.MustCompile("g.*"),
		Compression:  "lz4",
		BatchRecords: 64,
		RetryBackoff: 10 * time.Millisecond,
		PollInterval: 10 * time.Millisecond,
	})
	require.NoError(t, err)
	require.NoError(t, m.Once(ctx))

	requireSameRecords(t, s, c.ListenAddrs(), "orders", "strata.orders")
	requireSameRecords(t, s, c.ListenAddrs(), "users", "strata.users")
	requireGroupResumes(t, s, c.ListenAddrs(), "g1", "orders", "strata.orders")
	requireGroupResumes(t, s, c.ListenAddrs(), "g1", "users", "strata.users")

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	td, err := adm.ListTopics(ctx, "strata.orders", "strata.users")
	require.NoError(t, err)
	require.Len(t, td["strata.orders"].Partitions, 3)
	require.Len(t, td["strata.users"].Partitions, 2)
	rc, err := adm.DescribeTopicConfigs(ctx, "strata.orders", "strata.users")
	require.NoError(t, err)
	cfg := func(topic, name string) string {
		r, err := rc.On(topic, nil)
		require.NoError(t, err)
		for _, c := range r.Configs {
			if c.Key == name {
				return c.MaybeValue()
			}
		}
		return ""
	}
	require.Equal(t, "3600000", cfg("strata.orders", "retention.ms"))
	require.Equal(t, "compact", cfg("strata.users", "cleanup.policy"))
	offs, err := adm.FetchOffsets(ctx, "other")
	if err == nil {
		require.Empty(t, offs, "a group the pattern does not select")
	} else {
		require.ErrorIs(t, err, kerr.GroupIDNotFound, "a group the pattern does not select")
	}

	lag := m.Lag()
	require.Len(t, lag, 5)
	for _, l := range lag {
		require.Zero(t, l.Lag, "%+v", l)
	}

	// A second Once, from the target's progress: nothing again, then
	// only what is new.
	m2, err := New(s, Options{Brokers: c.ListenAddrs(), Topics: []string{"orders"}, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Rename: func(t string) string { return "strata." + t }})
	require.NoError(t, err)
	require.NoError(t, m2.Once(ctx))
	require.Zero(t, m2.Stats().Records)
	appendKeyed(t, s, "orders", 300, 30, 50)
	require.NoError(t, m2.Once(ctx))
	require.Equal(t, int64(30), m2.Stats().Records)
	requireSameRecords(t, s, c.ListenAddrs(), "orders", "strata.orders")
}
