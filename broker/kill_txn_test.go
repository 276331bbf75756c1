package broker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratalog/strata"
)

// TestKill9Txns kills, with SIGKILL, the child serving a store under
// SyncAlways (TestKill9ProduceChild) while a kgo transactional producer
// runs transactions of 6 records over 3 partitions, every third aborted,
// once it has seen a random number of its transactions end (the logged
// seed gives them), with the next one's records in flight; then a new
// producer of the same transactional id runs on a new child on the same
// directory, four rounds. After the last, under ReadCommitted, every
// transaction whose commit kgo acknowledged is there whole, no aborted one
// is, the one in flight at a kill whole or not at all, nothing twice, and
// no partition holds a transaction open.
func TestKill9Txns(t *testing.T) {
	rng, dir, opts := killSetup(t)

	ended := map[string]bool{} // transaction name: committed
	const rounds = 4
	for round := range rounds {
		kills := 1 + rng.IntN(40)
		for name, commit := range killTxnRound(t, dir, round, kills) {
			ended[name] = commit
		}
	}

	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	seen := map[string]int{} // transaction name: records visible
	for p := range 3 {
		end, err := s.ListOffsets(killTopic, p, strata.Latest)
		require.NoError(t, err)
		lso, err := s.View(strata.ReadCommitted).ListOffsets(killTopic, p, strata.Latest)
		require.NoError(t, err)
		require.Equal(t, end, lso, "partition %d holds a transaction open", p)
		vals := map[string]bool{}
		for r, err := range s.View(strata.ReadCommitted).Scan(killTopic, p, 0) {
			require.NoError(t, err)
			v := string(r.Value)
			require.False(t, vals[v], "%s twice", v)
			vals[v] = true
			name, _, _ := strings.Cut(v, "/")
			seen[name]++
		}
	}
	for name, n := range seen {
		require.Equal(t, 6, n, "transaction %s partly visible", name)
		if commit, ok := ended[name]; ok {
			require.True(t, commit, "aborted transaction %s visible", name)
		}
	}
	committed := 0
	for name, commit := range ended {
		if commit {
			committed++
			require.Equal(t, 6, seen[name], "committed transaction %s lost", name)
		}
	}
	t.Logf("%d transactions ended (%d committed), %d visible", len(ended), committed, len(seen))
}

// killTxnRound starts a child serving dir, runs transactions "r<round>t<i>"
// until kills of them have ended, then kills the child while the next
// one's records are produced, and returns how the ended ones ended.
func killTxnRound(t *testing.T, dir string, round, kills int) map[string]bool {
	t.Helper()
	cmd, addr := startServer(t, dir)
	defer func() { _ = cmd.Wait() }()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(killTopic), kgo.TransactionalID("kill9"),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.RecordRetries(2), kgo.RequestRetries(2))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ended := map[string]bool{}
	for i := 0; ; i++ {
		name := fmt.Sprintf("r%dt%d", round, i)
		require.NoError(t, cl.BeginTransaction())
		for j := range 6 {
			if i == kills && j == 3 {
				require.NoError(t, cmd.Process.Kill())
			}
			cl.Produce(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%s/%d", name, j)}, nil)
		}
		if i == kills {
			_ = cl.EndTransaction(ctx, kgo.TryCommit)
			return ended
		}
		require.NoError(t, cl.Flush(ctx), name)
		commit := i%3 != 2
		require.NoError(t, cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)), name)
		ended[name] = commit
	}
}
