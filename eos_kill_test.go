package strata_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// killEOSEnv gives TestKill9ExactlyOnceChild its flush policy ("always"
// or "never"), round and store directory, as "<policy>:<round>:<dir>".
const killEOSEnv = "STRATA_KILL9_EOS"

// killEOSPolicies are the flush policies TestKill9ExactlyOnce runs under.
var killEOSPolicies = map[string]strata.SyncPolicy{"always": strata.SyncAlways, "never": strata.SyncNever}

// TestKill9ExactlyOnce kills, with SIGKILL, a child process that runs the
// exactly-once workload (see TestExactlyOnceSurviveCrashAtEveryOperation)
// on the operating system's files, printing each call before it makes it
// and after it returns; the parent kills it once it has read a random
// number of those lines, so that the kill falls in a call or between two.
// After each round the reopened store holds every acknowledged append
// once, every committed transaction whole and every aborted one not at
// all, the call the kill cut short whole or not at all, and the group's
// offset of the last visible transaction; and on a copy of it, the retries
// of the acknowledged batches of every round's producer are answered as
// duplicates, and the conditional appends and transactions go on. It runs
// under SyncAlways and under SyncNever, whose writes a kill of the process
// does not lose either (the kernel has them): the producer state is read
// back from its snapshots and the log as under SyncAlways.
func TestKill9ExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	for _, name := range []string{"always", "never"} {
		t.Run("Sync"+strings.ToUpper(name[:1])+name[1:], func(t *testing.T) {
			killEOSTest(t, name, rand.New(rand.NewPCG(seed, uint64(len(name)))))
		})
	}
}

func killEOSTest(t *testing.T, policy string, rng *rand.Rand) {
	opts := &strata.Options{Sync: killEOSPolicies[policy], Logger: slog.New(slog.DiscardHandler)}
	dir := t.TempDir()
	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("a", strata.TopicConfig{Partitions: 2, SegmentBytes: 8 << 10}))
	require.NoError(t, s.CreateTopic("b", strata.TopicConfig{SegmentBytes: 8 << 10}))
	require.NoError(t, s.CreateTopic(eosInput.Topic, strata.TopicConfig{}))
	_, err = s.AppendTo(ctx, eosInput.Topic, eosInput.Partition, vals("in", eosInputRecords)...)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	var ops []*eosOp
	start := time.Now()
	for round := 0; round < 32 && time.Since(start) < 8*time.Second; round++ {
		at := fmt.Sprintf("round %d", round)
		cmd, lines := startChild(t, "TestKill9ExactlyOnceChild", fmt.Sprintf("%s=%s:%d:%s", killEOSEnv, policy, round, dir))
		// The kill comes after a begin (in its call) or an end (before
		// the next begins, or early in it).
		killAfter := 1 + rng.IntN(400)
		var (
			open           *eosOp // begun and not ended
			printed, ended int
			killed         bool
		)
		for line := range lines {
			kind, js, _ := strings.Cut(line, " ")
			switch kind {
			case "begin", "end":
				op := &eosOp{}
				if err := json.Unmarshal([]byte(js), op); err != nil {
					require.True(t, killed, "%s: %q: %v", at, line, err)
					continue // the kill cut the line short
				}
				if kind == "begin" {
					open = op
				} else {
					open = nil
					ops = append(ops, op)
					ended++
				}
				if printed++; printed == killAfter {
					require.NoError(t, cmd.Process.Kill(), at)
					killed = true
				}
			case "error":
				t.Errorf("%s: the child: %s", at, js)
			}
		}
		_ = cmd.Wait()
		require.True(t, killed, "%s: the child stopped after %d calls, before the kill", at, ended)
		cut := "none"
		if open != nil {
			open.State, cut = "uncertain", open.Kind
			ops = append(ops, open)
		}
		t.Logf("%s: killed after %d calls, in %s", at, ended, cut)

		s, err := strata.Open(dir, opts)
		require.NoError(t, err, at)
		checkEOSRecovered(t, s, ops, true, at)
		require.NoError(t, s.Close())

		// What the next round must find stays as it is; a copy checks
		// that the store goes on.
		cp := filepath.Join(t.TempDir(), "copy")
		require.NoError(t, os.CopyFS(cp, os.DirFS(dir)))
		s, err = strata.Open(cp, opts)
		require.NoError(t, err, at)
		st := checkEOSRecovered(t, s, ops, true, at)
		checkEOSAfterRestart(t, s, ops, st, at)
		require.NoError(t, s.Close())
	}
}

// TestKill9ExactlyOnceChild is TestKill9ExactlyOnce's child: it runs the
// exactly-once workload until it is killed, printing "begin <op>" before
// each call and "end <op>" after it (JSON), and "error <what>" for a call
// that did what it must not.
func TestKill9ExactlyOnceChild(t *testing.T) {
	env := os.Getenv(killEOSEnv)
	if env == "" {
		t.Skip("run by TestKill9ExactlyOnce")
	}
	policy, rest, _ := strings.Cut(env, ":")
	r, dir, _ := strings.Cut(rest, ":")
	round, _ := strconv.Atoi(r)
	s, err := strata.Open(dir, &strata.Options{Sync: killEOSPolicies[policy]})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	print := func(kind string) func(*eosOp) {
		return func(op *eosOp) {
			js, err := json.Marshal(op)
			if err != nil {
				panic(err)
			}
			fmt.Printf("%s %s\n", kind, js)
		}
	}
	w := &eosWorkload{
		s:      s,
		prefix: fmt.Sprintf("r%d.", round),
		errorf: func(format string, args ...any) { fmt.Printf("error "+format+"\n", args...) },
		begin:  print("begin"),
		end:    print("end"),
	}
	w.run(0)
	fmt.Println("error the workload stopped: a call failed")
	os.Exit(2)
}
