package strata_test

import (
	"bufio"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// killProducerEnv names the store directory and the round of
// TestKill9IdempotentProducerChild.
const killProducerEnv = "STRATA_KILL9_PRODUCER"

// TestKill9IdempotentProducer: a child process produces to 3 partitions
// under SyncAlways with an idempotent Producer (ProduceSync), printing each
// acknowledged record, until it is killed with SIGKILL once the parent has
// read a random number of those lines (the logged seed gives them). After
// every round the reopened store has each acknowledged record exactly once
// and no record twice, and the batches of each round carry a producer id
// of their own: no id was handed out again after a kill.
func TestKill9IdempotentProducer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	opts := &strata.Options{Sync: strata.SyncAlways, Logger: logOnFailure(t)}
	const parts = 3
	dir := t.TempDir()
	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: parts, SegmentBytes: 16 << 10}))
	require.NoError(t, s.Close())

	acked := map[string]bool{}
	for round := range 4 {
		cmd, lines := startChild(t, "TestKill9IdempotentProducerChild", fmt.Sprintf("%s=%s,%d", killProducerEnv, dir, round))
		kill := 1 + rng.IntN(600)
		atAck := killAt(t, cmd, lines, kill, func(line string) bool {
			v, ok := strings.CutPrefix(line, "ack ")
			if ok {
				acked[v] = true
			}
			return ok
		})
		t.Logf("round %d: killed at acknowledgement %d: %v", round, kill, atAck)

		s, err := strata.Open(dir, opts)
		require.NoError(t, err, "round %d", round)
		seen := map[string]int{}
		for part := range parts {
			for r, err := range s.Scan("t", part, 0) {
				require.NoError(t, err, "round %d", round)
				seen[string(r.Value)]++
			}
		}
		require.NoError(t, s.Close())
		for v, n := range seen {
			require.Equal(t, 1, n, "round %d: %s is there %d times", round, v, n)
		}
		for v := range acked {
			require.Equal(t, 1, seen[v], "round %d: acknowledged %s is missing", round, v)
		}
		// Every round's batches carry the id of that round's Producer, and
		// no two rounds share one.
		owner := map[int64]int{} // producer id → round
		for part := range parts {
			for _, b := range osBatches(t, filepath.Join(dir, fmt.Sprintf("t-%d", part))) {
				r, err := strconv.Atoi(strings.SplitN(b.firstValue, "-", 2)[0])
				require.NoError(t, err)
				if prev, ok := owner[b.h.ProducerID]; ok {
					require.Equal(t, prev, r, "producer id %d used by rounds %d and %d", b.h.ProducerID, prev, r)
				}
				owner[b.h.ProducerID] = r
			}
		}
	}
	require.NotEmpty(t, acked, "the children acknowledged records")
}

// TestKill9IdempotentProducerChild is TestKill9IdempotentProducer's
// child: it produces records "<round>-<i>" until it is killed.
func TestKill9IdempotentProducerChild(t *testing.T) {
	env := os.Getenv(killProducerEnv)
	if env == "" {
		t.Skip("run by TestKill9IdempotentProducer")
	}
	dir, round, _ := strings.Cut(env, ",")
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncAlways, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	p := s.Producer(strata.ProducerOptions{})
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i += 3 {
		recs := make([]strata.Record, 3)
		for j := range recs {
			recs[j] = rec(fmt.Sprint("k", i+j), fmt.Sprintf("%s-%d", round, i+j))
		}
		if _, err := p.ProduceSync(ctx, "t", recs...); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		for _, r := range recs {
			fmt.Fprintf(out, "ack %s\n", r.Value)
		}
		_ = out.Flush()
	}
}

// osBatch is a batch of a segment file: its header and its first record's
// value.
type osBatch struct {
	h          log.BatchHeader
	firstValue string
}

// osBatches returns the batches of the partition directory dir on the
// operating system's files, in offset order.
func osBatches(t *testing.T, dir string) []osBatch {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	require.NoError(t, err)
	slices.Sort(names)
	var d log.Decoder
	var out []osBatch
	for _, name := range names {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		for pos := 0; pos < len(data); {
			h, err := log.ReadHeader(data[pos:])
			if err != nil || h.Length == 0 {
				break
			}
			it, err := d.Iter(data[pos:pos+h.Size()], h)
			require.NoError(t, err)
			var r log.Record
			require.True(t, it.Next(&r))
			out = append(out, osBatch{h: h, firstValue: string(r.Value)})
			pos += h.Size()
		}
	}
	return out
}
