package broker_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// killDirEnv gives TestKill9ProduceChild the store directory it serves.
const killDirEnv = "STRATA_BROKER_KILL9_DIR"

// killTopic is the topic TestKill9Produce produces to.
const killTopic = "kill9"

// TestKill9Produce kills, with SIGKILL, a child process that serves a
// store under SyncAlways while a kgo producer with its defaults
// (idempotent, snappy, acks=all) produces distinct values to a topic of 3
// partitions. The parent kills the child once it has seen a random number
// of acknowledgements (produce promises with no error), so that the kill
// falls with batches in flight (batches of at most 4 KiB, so that a round
// has many), then starts another child on the same directory for the next
// round; the logged seed gives those numbers. After the last round the
// store holds every acknowledged value exactly once.
//
// A value that was not acknowledged may or may not be there, and is there
// at most once: within a round kgo's retries carry the producer id and
// sequence numbers the store dedups, and a round's client is closed with
// the child it produced to, so none of its records is retried against the
// next child (a retry there may carry a new producer id, which idempotence
// cannot match with the first attempt).
func TestKill9Produce(t *testing.T) {
	rng, dir, opts := killSetup(t)

	const rounds = 6
	acked := map[string]bool{}
	for round := range rounds {
		kills := 1 + rng.IntN(5000)
		got := killRound(t, dir, round, kills)
		t.Logf("round %d: killed after %d acknowledgements, %d in all", round, kills, len(got))
		for _, v := range got {
			acked[v] = true
		}
	}

	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	seen := map[string]int{}
	for p := range 3 {
		end, err := s.ListOffsets(killTopic, p, strata.Latest)
		require.NoError(t, err)
		for off := int64(0); off < end; {
			recs, err := s.Read(context.Background(), killTopic, p, off, 1000)
			require.NoError(t, err)
			require.NotEmpty(t, recs, "partition %d at %d of %d", p, off, end)
			for _, r := range recs {
				seen[string(r.Value)]++
			}
			off = recs[len(recs)-1].Offset + 1
		}
	}
	for v, n := range seen {
		require.Equal(t, 1, n, "value %q stored %d times", v, n)
	}
	for v := range acked {
		require.Equal(t, 1, seen[v], "acknowledged value %q lost", v)
	}
	t.Logf("%d acknowledged, %d stored", len(acked), len(seen))
}

// killRound starts a child serving dir, produces values "r<round>-<i>" to
// it until kills of them are acknowledged, kills the child with SIGKILL,
// and returns the values acknowledged by then.
func killRound(t *testing.T, dir string, round, kills int) []string {
	t.Helper()
	cmd, addr := startServer(t, dir)
	defer func() { _ = cmd.Wait() }()

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(killTopic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchMaxBytes(4<<10))
	require.NoError(t, err)

	var (
		mu      sync.Mutex
		acked   []string
		kill    = make(chan struct{})
		pending sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(context.Background())
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		for i := 0; ctx.Err() == nil; i++ {
			v := fmt.Sprintf("r%d-%d", round, i)
			pending.Add(1)
			cl.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(_ *kgo.Record, err error) {
				defer pending.Done()
				if err != nil {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				acked = append(acked, v)
				if len(acked) == kills {
					close(kill)
				}
			})
		}
	}()

	select {
	case <-kill:
	case <-time.After(10 * time.Second):
		mu.Lock()
		t.Errorf("round %d: %d of %d acknowledgements", round, len(acked), kills)
		mu.Unlock()
	}
	require.NoError(t, cmd.Process.Kill())
	cancel()
	<-produced
	cl.Close() // fails the records still buffered
	pending.Wait()

	mu.Lock()
	defer mu.Unlock()
	return acked
}

// killSetup skips the test under -short, and otherwise returns a
// random source of a logged seed and a directory holding killTopic (3
// partitions), with the options its store is to be opened with.
func killSetup(t *testing.T) (*rand.Rand, string, *strata.Options) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts child processes")
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	dir := t.TempDir()
	opts := &strata.Options{Sync: strata.SyncAlways, Logger: slog.New(slog.DiscardHandler)}
	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic(killTopic, strata.TopicConfig{Partitions: 3}))
	require.NoError(t, s.Close())
	return rand.New(rand.NewPCG(seed, 0)), dir, opts
}

// startServer runs TestKill9ProduceChild serving dir and returns the
// process and the address it listens on. The child exits when its stdin
// closes, so that it does not outlive a parent that fails.
func startServer(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9ProduceChild$")
	cmd.Env = append(os.Environ(), killDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	t.Cleanup(func() { stdin.Close() })
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), "addr "); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return cmd, addr
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	t.Fatalf("the child printed no address: %v", sc.Err())
	return nil, ""
}

// TestKill9ProduceChild is TestKill9Produce's child: it serves the store
// in the directory it is given under SyncAlways on a free loopback port,
// prints "addr <host:port>", and serves until it is killed or its stdin
// closes.
func TestKill9ProduceChild(t *testing.T) {
	dir := os.Getenv(killDirEnv)
	if dir == "" {
		t.Skip("run by TestKill9Produce")
	}
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncAlways, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv, err := broker.Start(s, &broker.Options{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	fmt.Printf("addr %s\n", srv.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	require.NoError(t, srv.Close())
	require.NoError(t, s.Close())
}
