package strata_test

import (
	"bufio"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// killTopicsDirEnv names the store directory of TestKill9TopicsChild.
const killTopicsDirEnv = "STRATA_KILL9_TOPICS_STORE"

// TestKill9Topics kills, with SIGKILL, a child that creates a topic, fills
// and commits it and deletes it, over and over, printing a line after each
// call; the kill comes once the parent has read a random number of those
// lines (the logged seed gives them), at a different moment of the cycle
// each round (during CreateTopic, appends, commits and DeleteTopic), and in
// the first round at the end of the first cycle. After each kill the store
// opens, every commit it has is in range, and a topic created again under
// the name inherits nothing: no commit, and a group consumer starts it at
// offset 0.
func TestKill9Topics(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	opts := &strata.Options{Sync: strata.SyncAlways, Logger: logOnFailure(t)}
	const parts = 3
	cycles := 0
	for round := range 12 {
		cmd, lines := startChild(t, "TestKill9TopicsChild", killTopicsDirEnv+"="+dir)
		// Round 0 is killed at the end of the first cycle, the others
		// at a random call of the first two.
		kill := 1 + rng.IntN(2*killTopicsCycleLines)
		if round == 0 {
			kill = killTopicsCycleLines
		}
		atLine := killAt(t, cmd, lines, kill, func(line string) bool {
			if strings.HasPrefix(line, "cycle") {
				cycles++
			}
			return true
		})
		t.Logf("round %d: killed at line %d: %v", round, kill, atLine)

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

// killTopicsCycleLines is how many lines TestKill9TopicsChild prints by the
// end of its first cycle: "open", then "create", 20 appends and a commit to
// each of 3 partitions, and "cycle 0" after the deletion.
const killTopicsCycleLines = 1 + 1 + 3*(20+1) + 1

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
	out := bufio.NewWriter(os.Stdout)
	did := func(what ...any) {
		fmt.Fprintln(out, what...)
		_ = out.Flush()
	}
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncAlways, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fail(err)
	}
	did("open")
	for i := 0; ; i++ {
		if err := s.CreateTopic("t", strata.TopicConfig{Partitions: 3, SegmentBytes: 4 << 10}); err != nil {
			fail(err)
		}
		did("create")
		for p := range 3 {
			for j := range 20 {
				if _, err := s.AppendTo(ctx, "t", p, rec("k", fmt.Sprint("old-", i, "-", j))); err != nil {
					fail(err)
				}
				did("append", p, j)
			}
			if err := s.Commit("g", "t", p, 15, ""); err != nil {
				fail(err)
			}
			did("commit", p)
		}
		if err := s.DeleteTopic("t"); err != nil {
			fail(err)
		}
		did("cycle", i)
	}
}
