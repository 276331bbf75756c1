package strata_test

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// killTopicsDirEnv names the store directory of TestKill9TopicsChild.
const killTopicsDirEnv = "STRATA_KILL9_TOPICS_STORE"

// TestKill9Topics kills, with SIGKILL, a child that creates a topic, fills
// and commits it and deletes it, over and over, at a different moment of
// the cycle each round (during Open, CreateTopic, appends, commits and
// DeleteTopic). After each kill the store opens, every commit it has is in
// range, and a topic created again under the name inherits nothing: no
// commit, and a group consumer starts it at offset 0.
func TestKill9Topics(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	opts := &strata.Options{Sync: strata.SyncAlways}
	const parts = 3
	cycles := 0
	var cycle time.Duration // how long a child's cycle takes here, measured in round 0
	for round := range 12 {
		cmd, lines := startChild(t, "TestKill9TopicsChild", killTopicsDirEnv+"="+dir)
		started, first := make(chan struct{}), make(chan struct{})
		counted := make(chan int, 1)
		go func() {
			n := 0
			for line := range lines {
				if line == "open" {
					close(started)
				}
				if strings.HasPrefix(line, "cycle") {
					if n++; n == 1 {
						close(first)
					}
				}
			}
			counted <- n
		}()
		select {
		case <-started:
		case <-time.After(20 * time.Second):
		}
		if round == 0 {
			// Measure a cycle (machines and -race differ by 10×), and
			// kill right after it.
			t0 := time.Now()
			select {
			case <-first:
			case <-time.After(20 * time.Second):
			}
			cycle = time.Since(t0)
		} else {
			// A different point of the first cycle each round, and of
			// the second in some.
			time.Sleep(cycle * time.Duration(round%7) / 5)
		}
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		cycles += <-counted

		s, err := strata.Open(dir, opts)
		require.NoError(t, err, "round %d: the store opens after the kill", round)
		for _, name := range s.Topics() {
			for p := range parts {
				om, ok := s.Committed("g", name, p)
				if !ok {
					continue
				}
				end, err := s.ListOffsets(name, p, strata.Latest)
				require.NoError(t, err)
				require.LessOrEqual(t, om.Offset, end, "round %d: a commit of %s-%d past its end", round, name, p)
			}
		}
		if slices.Contains(s.Topics(), "t") {
			require.NoError(t, s.DeleteTopic("t"))
		}
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: parts, SegmentBytes: 4 << 10}))
		requireFreshTopic(t, s, parts)
		require.NoError(t, s.DeleteTopic("t"))
		require.NoError(t, s.Close())
	}
	require.Positive(t, cycles, "the children completed cycles")
}

// TestKill9TopicsChild is TestKill9Topics' child: it creates, fills,
// commits and deletes topic t until it is killed.
func TestKill9TopicsChild(t *testing.T) {
	dir := os.Getenv(killTopicsDirEnv)
	if dir == "" {
		t.Skip("run by TestKill9Topics")
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncAlways})
	if err != nil {
		fail(err)
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, "open")
	_ = out.Flush()
	for i := 0; ; i++ {
		if err := s.CreateTopic("t", strata.TopicConfig{Partitions: 3, SegmentBytes: 4 << 10}); err != nil {
			fail(err)
		}
		for p := range 3 {
			for j := range 20 {
				if _, err := s.AppendTo(ctx, "t", p, rec("k", fmt.Sprint("old-", i, "-", j))); err != nil {
					fail(err)
				}
			}
			if err := s.Commit("g", "t", p, 15, ""); err != nil {
				fail(err)
			}
		}
		if err := s.DeleteTopic("t"); err != nil {
			fail(err)
		}
		fmt.Fprintln(out, "cycle", i)
		_ = out.Flush()
	}
}
