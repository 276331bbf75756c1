package strata_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// Tests of the root package's edges: a commit past a moved start offset, a
// revoke while a subscribed topic is deleted, ResetNone without commits,
// DeleteTopic's offsets and leftover directories, the internal offsets
// topic, ErrClosed from a blocked read, and a producer's linger.

func TestCommitNotBlockedByMovedStart(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	for i := range 10 {
		_, err := s.AppendTo(ctx, "t", i%2, rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
	}
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, MaxPollRecords: 5})
	require.NoError(t, err)
	defer c.Close()
	msgs, err := c.Poll(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, msgs)
	require.NoError(t, s.DeleteRecords("t", 1, 3), "retention overtakes the unread partition")
	require.NoError(t, c.Commit(ctx), "the other partitions still commit")
	om, ok := s.Committed("g", "t", msgs[0].Partition)
	require.True(t, ok)
	require.Positive(t, om.Offset)
}

func TestRevokeNotJammedByDeletedTopic(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("a", strata.TopicConfig{}))
	require.NoError(t, s.CreateTopic("b", strata.TopicConfig{}))
	opts := strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, AutoCommitInterval: time.Millisecond, PollWait: time.Millisecond}
	c, err := s.Consumer("g", []string{"a", "b"}, opts)
	require.NoError(t, err)
	defer c.Close()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	_, _ = c.Poll(pctx)
	cancel()
	require.NoError(t, s.DeleteTopic("b"))
	_, err = s.AppendTo(ctx, "a", 0, rec("k", "after"))
	require.NoError(t, err)
	msgs, err := c.Poll(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Equal(t, "after", string(msgs[0].Value))
}

func TestResetNoneKeepsReportingAndAnnouncesTheRest(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	require.NoError(t, s.Commit("g", "t", 0, 0, ""))
	var assigned []strata.TopicPartition
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{
		AutoOffsetReset: strata.ResetNone,
		OnAssigned: func(_ context.Context, _ *strata.Consumer, p []strata.TopicPartition) {
			assigned = append(assigned, p...)
		},
	})
	require.NoError(t, err)
	defer c.Close()
	for range 3 {
		_, err = c.Poll(ctx)
		require.ErrorIs(t, err, strata.ErrNoOffset, "every Poll says so")
	}
	require.Equal(t, []strata.TopicPartition{{Topic: "t", Partition: 0}}, assigned, "the partition with a commit is announced once")
	require.Equal(t, []strata.TopicPartition{{Topic: "t", Partition: 0}}, c.Assignment())
}

func TestDeleteTopicDeletesItsOffsetsAndData(t *testing.T) {
	dir := t.TempDir()
	opts := &strata.Options{Logger: logOnFailure(t)}
	s, err := strata.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	for i := range 5 {
		_, err := s.Append(ctx, "t", rec("k", fmt.Sprint("old", i)))
		require.NoError(t, err)
	}
	require.NoError(t, s.Commit("g", "t", 0, 5, ""))
	require.NoError(t, s.DeleteTopic("t"))
	_, ok := s.Committed("g", "t", 0)
	require.False(t, ok, "a deleted topic's offsets go too")
	require.NoError(t, s.CreateTopic("src", strata.TopicConfig{}))
	for i := range 3 {
		_, err := s.Append(ctx, "src", rec("k", fmt.Sprint("stale", i)))
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())

	// A crash in the middle of an earlier DeleteTopic left a directory
	// behind: a topic created under the name must not see its data.
	old := filepath.Join(dir, "x-0")
	require.NoError(t, os.MkdirAll(old, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(old, "00000000000000000000.log"), []byte("stale"), 0o644))
	// … and, from a deleted topic y of three partitions whose deletion a
	// crash stopped after y-0 and y-1 went, y-2 (a copy of real data):
	// a gap before it.
	gap := filepath.Join(dir, "y-2")
	require.NoError(t, os.CopyFS(gap, os.DirFS(filepath.Join(dir, "src-0"))))
	// A directory of another topic whose name extends this one's is kept.
	other := filepath.Join(dir, "y-2-0")
	require.NoError(t, os.MkdirAll(other, 0o755))
	s, err = strata.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	require.NoError(t, s.CreateTopic("x", strata.TopicConfig{}))
	require.NoError(t, s.CreateTopic("y", strata.TopicConfig{Partitions: 3}))
	for _, name := range []string{"t", "x", "y"} {
		end, err := s.ListOffsets(name, 0, strata.Latest)
		require.NoError(t, err)
		require.Zero(t, end, "%s starts empty", name)
	}
	end, err := s.ListOffsets("y", 2, strata.Latest)
	require.NoError(t, err)
	require.Zero(t, end, "y-2, past a gap, starts empty too")
	_, err = os.Stat(other)
	require.NoError(t, err, "another topic's directory stays")
	require.NoError(t, s.Close())
}

// TestDeleteTopicDeletesOffsetsOfActiveGroups: a group whose consumer
// subscribes to a deleted topic loses its offsets for it too (although
// DeleteOffsets, the admin operation, refuses while a member subscribes),
// so that the topic created again is read from its start.
func TestDeleteTopicDeletesOffsetsOfActiveGroups(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	for i := range 5 {
		_, err := s.Append(ctx, "t", rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
	}
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer c.Close()
	got := 0
	for got < 5 {
		msgs, err := c.Poll(ctx)
		require.NoError(t, err)
		got += len(msgs)
	}
	require.NoError(t, c.Commit(ctx))
	off, ok := s.Committed("g", "t", 0)
	require.True(t, ok)
	require.Equal(t, int64(5), off.Offset)

	require.NoError(t, s.DeleteTopic("t"))
	_, ok = s.Committed("g", "t", 0)
	require.False(t, ok, "the offsets of a group with a subscribed member go too")
}

func TestInternalTopicProtected(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	_, err := s.Append(ctx, "t", rec("k", "v"))
	require.NoError(t, err)
	require.NoError(t, s.Commit("g", "t", 0, 1, ""))
	require.ErrorIs(t, s.DeleteTopic(strata.ConsumerOffsetsTopic), strata.ErrReservedTopic)
	_, err = s.Append(ctx, strata.ConsumerOffsetsTopic, rec("k", "v"))
	require.ErrorIs(t, err, strata.ErrReservedTopic)
	_, err = s.AppendTo(ctx, strata.ConsumerOffsetsTopic, 0, rec("k", "v"))
	require.ErrorIs(t, err, strata.ErrReservedTopic)
	p := s.Producer(strata.ProducerOptions{})
	require.ErrorIs(t, p.Produce(ctx, strata.ConsumerOffsetsTopic, rec("k", "v"), nil), strata.ErrReservedTopic)
	require.NoError(t, p.Close())

	// The internal topic exists (the commit created it), yet no call that
	// names a topic reaches it: it is the store's own.
	const o = strata.ConsumerOffsetsTopic
	for name, call := range map[string]func() error{
		"Get":           func() error { _, err := s.Get(o, 0, 0); return err },
		"GetInto":       func() error { _, err := s.GetInto(o, 0, 0, nil); return err },
		"Scan":          func() error { return first(s.Scan(o, 0, 0)) },
		"Records":       func() error { return first(s.Records(ctx, o, 0, 0)) },
		"Read":          func() error { _, err := s.Read(ctx, o, 0, 0, 1); return err },
		"Fetch":         func() error { _, err := s.Fetch(ctx, o, 0, 0, 1, 0); return err },
		"ListOffsets":   func() error { _, err := s.ListOffsets(o, 0, strata.Latest); return err },
		"PartitionFor":  func() error { _, err := s.PartitionFor(o, []byte("k")); return err },
		"DeleteRecords": func() error { return s.DeleteRecords(o, 0, 0) },
		"Commit":        func() error { return s.Commit("g", o, 0, 0, "") },
		"Lag":           func() error { _, err := s.Lag(ctx, "g", o); return err },
		"ResetOffsets":  func() error { _, err := s.ResetOffsets("g", o, strata.ToEarliest, false); return err },
		"EnsureTopic":   func() error { return s.EnsureTopic(o, strata.TopicConfig{}) },
		"CreateTopic":   func() error { return s.CreateTopic(o, strata.TopicConfig{}) },
	} {
		err := call()
		require.ErrorIs(t, err, strata.ErrReservedTopic, name)
		requireSentinelTextsOnce(t, err)
	}
	require.NotContains(t, s.Topics(), o)
	// The calls that look after it take it.
	_, err = s.DescribeTopic(o)
	require.NoError(t, err)
	_, err = s.Compact(ctx, o)
	require.NoError(t, err)
}

// first returns the first error seq yields, or nil.
func first(seq func(func(strata.Record, error) bool)) error {
	for _, err := range seq {
		return err
	}
	return nil
}

// TestClosedErrorsMatchErrClosed: a Records iterator blocked at the end of
// a partition (synctest.Wait: every goroutine of the bubble blocked) ends
// with ErrClosed when the store closes.
func TestClosedErrorsMatchErrClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := strata.Open(t.TempDir(), nil)
		require.NoError(t, err)
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
		done := make(chan error, 1)
		go func() {
			for _, err := range s.Records(ctx, "t", 0, 0) {
				done <- err
				return
			}
		}()
		synctest.Wait()
		require.NoError(t, s.Close())
		require.ErrorIs(t, <-done, strata.ErrClosed)
	})
}

// TestProducerLingerNeverStalls: a batch whose linger ends while the
// producer looks the other way is still sent without a Flush.
func TestProducerLingerNeverStalls(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	for _, linger := range []time.Duration{2 * time.Microsecond, 10 * time.Microsecond} {
		p := s.Producer(strata.ProducerOptions{Linger: linger})
		for i := range 300 {
			done := make(chan struct{})
			require.NoError(t, p.Produce(ctx, "t", rec("k", fmt.Sprint(i)), func(strata.Position, error) { close(done) }))
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("linger %v, record %d: the batch never went out", linger, i)
			}
		}
		require.NoError(t, p.Close())
	}
}
