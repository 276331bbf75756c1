package strata_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/stratatest"
)

func TestCommitCommittedPersist(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	for i := range 10 {
		_, err := s.AppendTo(ctx, "t", i%2, rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
	}
	require.NoError(t, s.Commit("g1", "t", 0, 3, "meta"))
	require.NoError(t, s.Commit("g2", "t", 0, 5, ""))
	require.NoError(t, s.Commit("g1", "t", 1, 5, ""))
	require.ErrorIs(t, s.Commit("g1", "t", 0, 6, ""), strata.ErrOffsetOutOfRange, "past the end offset")
	require.ErrorIs(t, s.Commit("g1", "t", 2, 0, ""), strata.ErrUnknownPartition)
	require.ErrorIs(t, s.Commit("g1", "nope", 0, 0, ""), strata.ErrUnknownTopic)

	om, ok := s.Committed("g1", "t", 0)
	require.True(t, ok)
	require.Equal(t, int64(3), om.Offset)
	require.Equal(t, "meta", om.Metadata)
	om, ok = s.Committed("g2", "t", 0)
	require.True(t, ok)
	require.Equal(t, int64(5), om.Offset, "groups are independent")
	_, ok = s.Committed("g2", "t", 1)
	require.False(t, ok)
	require.Equal(t, []string{"t"}, s.Topics(), "the offsets topic is internal")
	require.NoError(t, s.Close())

	// Commits are records in __consumer_offsets: replayed at Open, after a
	// clean close and after a crash alike.
	for _, crash := range []bool{false, true} {
		if crash {
			require.NoError(t, os.Remove(filepath.Join(dir, ".clean-shutdown")))
		}
		s, err = strata.Open(dir, nil)
		require.NoError(t, err)
		om, ok = s.Committed("g1", "t", 0)
		require.True(t, ok, "crash=%v", crash)
		require.Equal(t, int64(3), om.Offset)
		require.Equal(t, "meta", om.Metadata)
		om, _ = s.Committed("g1", "t", 1)
		require.Equal(t, int64(5), om.Offset)
		require.NoError(t, s.Close())
	}
}

func TestLagAndReset(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	clock := func() time.Time { return now }
	s := stratatest.Open(t, &strata.Options{Now: clock})
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	for i := range 10 {
		r := rec("k", fmt.Sprint(i))
		r.Timestamp = now.Add(time.Duration(i) * time.Second)
		_, err := s.AppendTo(ctx, "t", 0, r)
		require.NoError(t, err)
	}
	require.NoError(t, s.Commit("g", "t", 0, 4, ""))
	lag, err := s.Lag(ctx, "g", "t")
	require.NoError(t, err)
	require.Equal(t, []strata.PartitionLag{
		{Partition: 0, EndOffset: 10, Committed: 4, Lag: 6, OldestUnconsumed: now.Add(4 * time.Second).UTC()},
		{Partition: 1, EndOffset: 0, Committed: -1, Lag: 0},
	}, lag)

	plan, err := s.ResetOffsets("g", "t", strata.ShiftBy(-2), true)
	require.NoError(t, err)
	require.Equal(t, []strata.OffsetChange{{Partition: 0, From: 4, To: 2}, {Partition: 1, From: -1, To: 0}}, plan)
	om, _ := s.Committed("g", "t", 0)
	require.Equal(t, int64(4), om.Offset, "a dry run changes nothing")

	for _, tc := range []struct {
		name string
		spec strata.ResetSpec
		want int64
	}{
		{"earliest", strata.ToEarliest, 0},
		{"latest", strata.ToLatest, 10},
		{"time", strata.ToTime(now.Add(7 * time.Second)), 7},
		{"offset clamped", strata.ToOffset(100), 10},
		{"shift back", strata.ShiftBy(-3), 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.ResetOffsets("g", "t", tc.spec, false)
			require.NoError(t, err)
			om, _ := s.Committed("g", "t", 0)
			require.Equal(t, tc.want, om.Offset)
		})
	}

	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	_, err = s.ResetOffsets("g", "t", strata.ToEarliest, false)
	require.ErrorIs(t, err, strata.ErrGroupActive, "no reset under a live consumer")
	require.ErrorIs(t, s.Commit("g", "t", 0, 1, ""), strata.ErrGroupActive)
	require.NoError(t, c.Close())
}

func TestConsumerGroupSharesPartitions(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 6}))
	for i := range 60 {
		_, err := s.AppendTo(ctx, "t", i%6, rec(fmt.Sprint("k", i), fmt.Sprint(i)))
		require.NoError(t, err)
	}
	opts := strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, PollWait: 5 * time.Millisecond}
	a, err := s.Consumer("g", []string{"t"}, opts)
	require.NoError(t, err)
	b, err := s.Consumer("g", []string{"t"}, opts)
	require.NoError(t, err)

	seen := map[string]int{}
	pollAll := func(cs ...*strata.Consumer) {
		for range 5 {
			for _, c := range cs {
				pctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
				msgs, err := c.Poll(pctx)
				cancel()
				if err != nil {
					require.ErrorIs(t, err, context.DeadlineExceeded)
				}
				for _, m := range msgs {
					seen[string(m.Value)]++
				}
				require.NoError(t, c.Commit(ctx))
			}
		}
	}
	pollAll(a, b)
	require.Len(t, seen, 60, "the group consumed every record")
	for v, n := range seen {
		require.Equal(t, 1, n, "record %s consumed once", v)
	}
	ownedA, ownedB := a.Assignment(), b.Assignment()
	require.Len(t, ownedA, 3)
	require.Len(t, ownedB, 3)
	for _, tp := range ownedA {
		require.NotContains(t, ownedB, tp, "no partition has two owners")
	}

	// A second group reads the same data independently.
	other, err := s.Consumer("other", []string{"t"}, opts)
	require.NoError(t, err)
	got := 0
	for got < 60 {
		msgs, err := other.Poll(ctx)
		require.NoError(t, err)
		got += len(msgs)
	}
	require.NoError(t, other.Close())

	// A leaves: B takes over everything, from A's commits.
	require.NoError(t, a.Close())
	for i := range 12 {
		_, err := s.AppendTo(ctx, "t", i%6, rec("k", fmt.Sprint("late-", i)))
		require.NoError(t, err)
	}
	pollAll(b)
	require.Len(t, b.Assignment(), 6)
	require.Len(t, seen, 72)
	for v, n := range seen {
		require.Equal(t, 1, n, "record %s consumed once: commits carried over", v)
	}
	require.NoError(t, b.Close())
}

// TestConsumerCrashRedeliversOnlyUncommitted: a consumer that processes,
// commits, then dies without closing is evicted after the session timeout;
// the survivor gets its partitions and sees only what was not committed.
func TestConsumerCrashRedeliversOnlyUncommitted(t *testing.T) {
	var mu sync.Mutex
	now := time.UnixMilli(1_700_000_000_000)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s := stratatest.Open(t, &strata.Options{Now: clock, SessionTimeout: 10 * time.Second})
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 1}))
	for i := range 20 {
		_, err := s.Append(ctx, "t", rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
	}
	opts := strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, MaxPollRecords: 5, PollWait: time.Millisecond}
	dying, err := s.Consumer("g", []string{"t"}, opts)
	require.NoError(t, err)
	msgs, err := dying.Poll(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 5)
	require.NoError(t, dying.Commit(ctx), "processed 0..4, committed")
	msgs, err = dying.Poll(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 5, "5..9 handed out, never committed: the process dies here")

	survivor, err := s.Consumer("g", []string{"t"}, opts)
	require.NoError(t, err)
	advance(11 * time.Second) // the dead one's session expires
	var values []string
	for len(values) < 15 {
		msgs, err := survivor.Poll(ctx)
		require.NoError(t, err)
		for _, m := range msgs {
			values = append(values, string(m.Value))
		}
	}
	require.Equal(t, "5", values[0], "redelivery starts at the last commit")
	require.Len(t, values, 15, "exactly the uncommitted records, 5..19")
	err = dying.CommitOffsets(ctx, map[strata.TopicPartition]int64{{Topic: "t", Partition: 0}: 10})
	require.ErrorIs(t, err, strata.ErrFenced, "the evicted consumer's late commit is fenced")
	require.EqualError(t, err, `strata: commit by member "g-1" of group "g", which left or was evicted: member fenced`,
		"the call, the member and the group, each once")
	requireSentinelTextsOnce(t, err)
	require.NoError(t, survivor.Close())
}

func TestConsumerCallbacksAndAutoReset(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	_, err := s.AppendTo(ctx, "t", 0, rec("k", "old"))
	require.NoError(t, err)

	var assigned, revoked []strata.TopicPartition
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{
		PollWait: time.Millisecond,
		OnAssigned: func(_ context.Context, _ *strata.Consumer, p []strata.TopicPartition) {
			assigned = append(assigned, p...)
		},
		OnRevoked: func(ctx context.Context, c *strata.Consumer, p []strata.TopicPartition) {
			revoked = append(revoked, p...)
			require.NoError(t, c.Commit(ctx))
		},
	})
	require.NoError(t, err)
	pctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	msgs, err := c.Poll(pctx)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "latest (the default) skips what was there")
	require.Empty(t, msgs)
	require.Len(t, assigned, 2)
	_, err = s.AppendTo(ctx, "t", 1, rec("k", "new"))
	require.NoError(t, err)
	msgs, err = c.Poll(ctx)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Equal(t, "new", string(msgs[0].Value))
	require.NoError(t, c.Close())
	require.Len(t, revoked, 2, "Close revokes")
	om, ok := s.Committed("g", "t", 1)
	require.True(t, ok, "OnRevoked committed")
	require.Equal(t, int64(1), om.Offset)

	none, err := s.Consumer("g2", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetNone})
	require.NoError(t, err)
	_, err = none.Poll(ctx)
	require.ErrorIs(t, err, strata.ErrNoOffset)
	require.NoError(t, none.Close())
}

// TestGroupUnderChurn runs a producer and consumers that join and leave
// while it appends (-race): every record is consumed at least once. It runs
// in a synctest bubble: the consumers' lifetimes, polls and the wait for
// the records pass on its fake clock.
func TestGroupUnderChurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := stratatest.Open(t, nil)
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 4}))
		const total = 400
		var mu sync.Mutex
		seen := map[string]int{}
		runConsumer := func(stop <-chan struct{}) error {
			c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{
				AutoOffsetReset: strata.ResetEarliest, PollWait: time.Millisecond,
				OnRevoked: func(ctx context.Context, c *strata.Consumer, _ []strata.TopicPartition) { _ = c.Commit(ctx) },
			})
			if err != nil {
				return err
			}
			defer c.Close()
			for {
				select {
				case <-stop:
					return nil
				default:
				}
				pctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
				msgs, err := c.Poll(pctx)
				cancel()
				if err != nil && pctx.Err() == nil {
					return err
				}
				mu.Lock()
				for _, m := range msgs {
					seen[string(m.Value)]++
				}
				mu.Unlock()
				if err := c.Commit(ctx); err != nil {
					return err
				}
			}
		}
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		stopAll := make(chan struct{})
		wg.Go(func() { // producer
			for i := range total {
				if _, err := s.Append(ctx, "t", rec(fmt.Sprint("key-", i%37), fmt.Sprint(i))); err != nil {
					errs <- err
					return
				}
			}
		})
		for range 2 { // long-lived consumers
			wg.Go(func() { errs <- runConsumer(stopAll) })
		}
		for range 3 { // consumers that come and go
			stop := make(chan struct{})
			wg.Go(func() { errs <- runConsumer(stop) })
			time.Sleep(5 * time.Millisecond)
			close(stop)
		}
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(seen) == total
		}, 20*time.Second, 5*time.Millisecond, "every record consumed")
		close(stopAll)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	})
}

// TestConsumerCommitBelowStart: a committed offset that retention (here
// DeleteRecords) left behind resets per AutoOffsetReset.
func TestConsumerCommitBelowStart(t *testing.T) {
	s := stratatest.Open(t, &strata.Options{Assignor: group.Sticky()})
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	for i := range 10 {
		_, err := s.Append(ctx, "t", rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
	}
	require.NoError(t, s.Commit("g", "t", 0, 2, ""))
	require.NoError(t, s.DeleteRecords("t", 0, 5))

	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	msgs, err := c.Poll(ctx)
	require.NoError(t, err)
	require.Equal(t, "5", string(msgs[0].Value), "earliest: from the new start offset")
	require.NoError(t, c.Close())

	n, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetNone})
	require.NoError(t, err)
	_, err = n.Poll(ctx)
	require.ErrorIs(t, err, strata.ErrNoOffset, "none: an error rather than a silent jump")
	require.NoError(t, n.Close())
}

// TestPollWithEndedContextDeliversNothingItSkips: a Poll whose context has
// ended moves no position, so a Commit after it cannot skip records.
func TestPollWithEndedContextDeliversNothingItSkips(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	for i := range 6 {
		_, err := s.AppendTo(ctx, "t", i%2, rec("k", fmt.Sprint(i)))
		require.NoError(t, err)
	}
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	ended, cancel := context.WithCancel(ctx)
	cancel()
	msgs, err := c.Poll(ended)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, msgs)
	require.Len(t, c.Assignment(), 2, "the Poll still checked in with the group")
	require.NoError(t, c.Commit(ctx))
	for p := range 2 {
		om, _ := s.Committed("g", "t", p)
		require.Zero(t, om.Offset, "nothing was delivered, nothing is committed past")
	}
	require.NoError(t, c.Close())
}
