package strata_test

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// killTxnEnv gives TestKill9TxnsChild its round and store directory, as
// "<round>:<dir>".
const killTxnEnv = "STRATA_KILL9_TXN"

// TestKill9Txns kills, with SIGKILL, a child process that commits
// transactions across three partitions of two topics under SyncAlways,
// printing each one whose Commit returned, once the parent has read a
// random number of those lines (the logged seed gives them). The reopened
// store has every acknowledged transaction whole under ReadCommitted, and
// every other one whole or not at all, and no transaction open.
func TestKill9Txns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	opts := &strata.Options{Sync: strata.SyncAlways, Logger: logOnFailure(t)}
	dir := t.TempDir()
	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("a", strata.TopicConfig{Partitions: 2, SegmentBytes: 64 << 10}))
	require.NoError(t, s.CreateTopic("b", strata.TopicConfig{SegmentBytes: 64 << 10}))
	require.NoError(t, s.Close())

	acked := 0
	for round := range 5 {
		cmd, lines := startChild(t, "TestKill9TxnsChild", fmt.Sprintf("%s=%d:%s", killTxnEnv, round, dir))
		last := -1
		kill := 1 + rng.IntN(100)
		atAck := killAt(t, cmd, lines, kill, func(line string) bool {
			if rest, ok := strings.CutPrefix(line, "ack "); ok {
				if n, err := strconv.Atoi(rest); err == nil {
					last = n
					return true
				}
			}
			return false
		})
		t.Logf("round %d: killed at acknowledgement %d: %v; the last acknowledged transaction %d", round, kill, atAck, last)

		s, err := strata.Open(dir, opts)
		require.NoError(t, err, "round %d", round)
		visible := map[string]bool{}
		for _, tp := range txnCrashParts {
			for _, v := range readCommitted(t, s, tp.Topic, tp.Partition) {
				visible[v] = true
			}
			p, err := strata.PartitionOf(s, tp.Topic, tp.Partition)
			require.NoError(t, err)
			require.Equal(t, p.EndOffset(), p.LastStableOffset(), "round %d %v: a transaction left open", round, tp)
		}
		for i := 0; ; i++ {
			n := 0
			for _, tp := range txnCrashParts {
				if visible[killTxnValue(round, i, tp)] {
					n++
				}
			}
			if i <= last {
				require.Equal(t, len(txnCrashParts), n, "round %d: acknowledged transaction %d not whole", round, i)
				acked++
				continue
			}
			require.True(t, n == 0 || n == len(txnCrashParts), "round %d: transaction %d partly visible", round, i)
			if n == 0 {
				break
			}
		}
		require.NoError(t, s.Close())
	}
	require.Positive(t, acked, "the children acknowledged transactions")
}

// killTxnValue is the value transaction i of a round writes to tp.
func killTxnValue(round, i int, tp strata.TopicPartition) string {
	return fmt.Sprintf("r%d.t%d.%s%d", round, i, tp.Topic, tp.Partition)
}

// TestKill9TxnsChild is TestKill9Txns' child: it commits transactions
// until it is killed.
func TestKill9TxnsChild(t *testing.T) {
	env := os.Getenv(killTxnEnv)
	if env == "" {
		t.Skip("run by TestKill9Txns")
	}
	r, dir, _ := strings.Cut(env, ":")
	round, _ := strconv.Atoi(r)
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncAlways, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "relay"})
		for _, tp := range txnCrashParts {
			if err == nil {
				err = tx.AppendTo(ctx, tp.Topic, tp.Partition, strata.Record{Value: []byte(killTxnValue(round, i, tp))})
			}
		}
		if err == nil {
			err = tx.Commit(ctx)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		fmt.Printf("ack %d\n", i)
	}
}
