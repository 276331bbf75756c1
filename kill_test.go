package strata_test

import (
	"bufio"
	"fmt"
	"io"
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
// is killed with SIGKILL 20 ms × the round after its first commit, and the
// reopened store has every acknowledged commit (and the records it points
// past).
func TestKill9Commits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncAlways})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{SegmentBytes: 64 << 10}))
	require.NoError(t, s.Close())

	total := 0
	for round := range 5 {
		cmd, lines := startChild(t, "TestKill9CommitsChild", killDirEnv+"="+dir)
		acked := make(chan int64, 1)
		first := make(chan struct{})
		go func() {
			last := int64(-1)
			for line := range lines {
				if rest, ok := strings.CutPrefix(line, "ack "); ok {
					if n, err := strconv.ParseInt(rest, 10, 64); err == nil {
						if last < 0 {
							close(first)
						}
						last = n
					}
				}
			}
			acked <- last
		}()
		select { // kill once the child is committing
		case <-first:
		case <-time.After(20 * time.Second):
		}
		time.Sleep(time.Duration(20*round) * time.Millisecond)
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		last := <-acked

		s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncAlways})
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
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncAlways})
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
