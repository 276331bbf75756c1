package strata_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// killDirEnv names the store directory of TestKill9CommitsChild.
const killDirEnv = "STRATA_KILL9_STORE"

// TestKill9Commits is the partition package's kill -9 test extended to
// committed offsets: a child process appends a record and commits the
// offset after it, under SyncAlways, printing each acknowledged commit; it
// is killed with SIGKILL once the parent has read a random number of those
// lines (the logged seed gives them), and the reopened store has every
// acknowledged commit (and the records it points past).
func TestKill9Commits(t *testing.T) {
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
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 64 << 10}))
	require.NoError(t, s.Close())

	total := 0
	for round := range 5 {
		cmd, lines := startChild(t, "TestKill9CommitsChild", killDirEnv+"="+dir)
		last := int64(-1)
		kill := 1 + rng.IntN(200)
		atAck := killAt(t, cmd, lines, kill, func(line string) bool {
			if rest, ok := strings.CutPrefix(line, "ack "); ok {
				if n, err := strconv.ParseInt(rest, 10, 64); err == nil {
					last = n
					return true
				}
			}
			return false
		})
		t.Logf("round %d: killed at acknowledgement %d: %v; the last acknowledged commit %d", round, kill, atAck, last)

		s, err := strata.Open(dir, opts)
		require.NoError(t, err, "round %d", round)
		om, ok := s.Committed("g", "t", 0)
		if last >= 0 {
			total++
			require.True(t, ok, "round %d: the commits are gone", round)
			require.GreaterOrEqual(t, om.Offset, last, "round %d: acknowledged commit %d lost", round, last)
			recs, err := s.Read(ctx, "t", 0, om.Offset-1, 1)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprint("v", om.Offset-1), string(recs[0].Value), "the committed record is there")
		}
		require.NoError(t, s.Close())
	}
	require.Positive(t, total, "the children acknowledged commits")
}

// TestKill9CommitsChild is TestKill9Commits' child: it appends and commits
// until it is killed.
func TestKill9CommitsChild(t *testing.T) {
	dir := os.Getenv(killDirEnv)
	if dir == "" {
		t.Skip("run by TestKill9Commits")
	}
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncAlways, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	for {
		end, err := s.ListOffsets("t", 0, strata.Latest)
		if err == nil {
			_, err = s.AppendTo(ctx, "t", 0, rec("k", fmt.Sprint("v", end)))
		}
		if err == nil {
			err = s.Commit("g", "t", 0, end+1, "")
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		fmt.Fprintf(out, "ack %d\n", end+1)
		_ = out.Flush()
	}
}

// startChild runs the test named test of this test binary in a child
// process with env added to its environment, and returns the process and
// the lines it prints, closed when its output ends.
func startChild(t *testing.T, test, env string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	return cmd, lines
}

// killTimeout bounds how long killAt waits for the lines it counts: a child
// that has not printed them by then (a loaded machine) is killed anyway.
const killTimeout = 20 * time.Second

// killAt reads a child's lines until its output ends, passing each to
// count, and kills the child with SIGKILL once count has returned true n
// times, or after killTimeout if that has not happened by then. The lines
// the child printed before it died are all read: a kill lands a little
// after the line that asked for it. It waits for the child, and reports
// whether the kill came at the n-th counted line.
func killAt(t *testing.T, cmd *exec.Cmd, lines <-chan string, n int, count func(line string) bool) bool {
	t.Helper()
	timeout := time.NewTimer(killTimeout)
	defer timeout.Stop()
	counted, killed, atLine := 0, false, false
	kill := func() {
		if !killed {
			killed = true
			require.NoError(t, cmd.Process.Kill())
		}
	}
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				_ = cmd.Wait()
				return atLine
			}
			if count(line) {
				if counted++; counted == n && !killed {
					atLine = true
					kill()
				}
			}
		case <-timeout.C:
			kill()
		}
	}
}
