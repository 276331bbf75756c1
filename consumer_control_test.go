package strata_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// fakeClock is a store clock moved by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.UnixMilli(1_700_000_000_000).UTC()} }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// fillParts appends n records to each of the topic's partitions, record i of
// partition p valued "p/i" and stamped base + i seconds.
func fillParts(t *testing.T, s *strata.Store, topicName string, parts, n int, base time.Time) {
	t.Helper()
	for p := range parts {
		for i := range n {
			r := rec("k", fmt.Sprintf("%d/%d", p, i))
			r.Timestamp = base.Add(time.Duration(i) * time.Second)
			_, err := s.AppendTo(ctx, topicName, p, r)
			require.NoError(t, err)
		}
	}
}

// values returns the values of msgs.
func values(msgs []strata.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Value))
	}
	return out
}

// pollOne polls c once, which must return records.
func pollOne(t *testing.T, c *strata.Consumer) []strata.Message {
	t.Helper()
	msgs, err := c.Poll(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, msgs)
	return msgs
}

func TestConsumerSeek(t *testing.T) {
	clk := newFakeClock()
	s := stratatest.Open(t, &strata.Options{Now: clk.Now})
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	require.NoError(t, s.CreateTopic("other", strata.TopicConfig{}))
	base := clk.Now().Add(-time.Hour)
	fillParts(t, s, "t", 1, 10, base)
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, MaxPollRecords: 1})
	require.NoError(t, err)
	defer c.Close()
	tp := strata.TopicPartition{Topic: "t", Partition: 0}
	require.Equal(t, []string{"0/0"}, values(pollOne(t, c)))

	for _, tc := range []struct {
		name string
		seek func() error
		want string // the next record, "" for none (at the end)
	}{
		{"offset", func() error { return c.Seek(tp, 7) }, "0/7"},
		{"back", func() error { return c.Seek(tp, 2) }, "0/2"},
		{"earliest", func() error { return c.SeekTo(tp, strata.Earliest) }, "0/0"},
		{"time", func() error { return c.SeekTo(tp, strata.AtTime(base.Add(4500*time.Millisecond))) }, "0/5"},
		{"time before all", func() error { return c.SeekTo(tp, strata.AtTime(base.Add(-time.Hour))) }, "0/0"},
		{"end offset", func() error { return c.Seek(tp, 10) }, ""},
		{"latest", func() error { return c.SeekTo(tp, strata.Latest) }, ""},
		{"time after all", func() error { return c.SeekTo(tp, strata.AtTime(base.Add(time.Hour))) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, tc.seek())
			if tc.want == "" {
				ended, cancel := context.WithCancel(ctx)
				cancel()
				_, err := c.Poll(ended)
				require.ErrorIs(t, err, context.Canceled)
				require.NoError(t, c.Commit(ctx))
				om, _ := s.Committed("g", "t", 0)
				require.Equal(t, int64(10), om.Offset, "the position is the end")
				return
			}
			require.Equal(t, []string{tc.want}, values(pollOne(t, c)))
		})
	}

	t.Run("commit after a seek commits the sought position", func(t *testing.T) {
		require.NoError(t, c.Seek(tp, 3))
		require.NoError(t, c.Commit(ctx))
		om, _ := s.Committed("g", "t", 0)
		require.Equal(t, int64(3), om.Offset)
	})

	t.Run("bad input changes nothing", func(t *testing.T) {
		require.NoError(t, c.Seek(tp, 4))
		err := c.Seek(tp, 11)
		require.ErrorIs(t, err, strata.ErrOffsetOutOfRange)
		require.ErrorContains(t, err, "[0, 10]", "the error says the range")
		require.ErrorIs(t, c.Seek(tp, -1), strata.ErrOffsetOutOfRange)
		require.ErrorIs(t, c.Seek(strata.TopicPartition{Topic: "other", Partition: 0}, 0), strata.ErrNotOwner)
		require.ErrorIs(t, c.Seek(strata.TopicPartition{Topic: "t", Partition: 1}, 0), strata.ErrNotOwner)
		require.ErrorIs(t, c.SeekTo(strata.TopicPartition{Topic: "t", Partition: 1}, strata.Earliest), strata.ErrNotOwner)
		require.Equal(t, []string{"0/4"}, values(pollOne(t, c)))
	})

	t.Run("after retention moved the start", func(t *testing.T) {
		require.NoError(t, s.DeleteRecords("t", 0, 6))
		require.ErrorIs(t, c.Seek(tp, 5), strata.ErrOffsetOutOfRange)
		require.NoError(t, c.SeekTo(tp, strata.AtTime(base)), "a time before the start seeks to the start")
		require.Equal(t, []string{"0/6"}, values(pollOne(t, c)))
	})
}

// TestConsumerSeekInCallbacks: OnAssigned may seek a partition it is
// handed, and a Seek starts a partition that ResetNone left waiting.
func TestConsumerSeekInCallbacks(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	fillParts(t, s, "t", 1, 5, time.Now())
	tp := strata.TopicPartition{Topic: "t", Partition: 0}
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{
		OnAssigned: func(_ context.Context, c *strata.Consumer, parts []strata.TopicPartition) {
			require.NoError(t, c.Seek(parts[0], 3))
		},
	})
	require.NoError(t, err)
	require.Equal(t, []string{"0/3", "0/4"}, values(pollOne(t, c)), "latest, but OnAssigned sought 3")
	require.NoError(t, c.Close())

	var assigned []strata.TopicPartition
	n, err := s.Consumer("g2", []string{"t"}, strata.ConsumerOptions{
		AutoOffsetReset: strata.ResetNone,
		OnAssigned: func(_ context.Context, _ *strata.Consumer, parts []strata.TopicPartition) {
			assigned = append(assigned, parts...)
		},
	})
	require.NoError(t, err)
	defer n.Close()
	_, err = n.Poll(ctx)
	require.ErrorIs(t, err, strata.ErrNoOffset)
	require.Empty(t, assigned)
	require.Empty(t, n.Assignment())
	require.NoError(t, n.Seek(tp, 1), "the partition is owned, waiting for a position")
	require.Equal(t, []string{"0/1", "0/2", "0/3", "0/4"}, values(pollOne(t, n)))
	require.Equal(t, []strata.TopicPartition{tp}, assigned, "OnAssigned runs once it can start")
	require.Equal(t, []strata.TopicPartition{tp}, n.Assignment())
}

func TestConsumerPauseResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := stratatest.Open(t, &strata.Options{SessionTimeout: 10 * time.Second})
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
		fillParts(t, s, "t", 2, 3, time.Now())
		t0, t1 := strata.TopicPartition{Topic: "t", Partition: 0}, strata.TopicPartition{Topic: "t", Partition: 1}
		c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, PollWait: time.Second})
		require.NoError(t, err)
		defer c.Close()

		require.NoError(t, c.Pause(t0))
		require.Equal(t, []strata.TopicPartition{t0}, c.Paused())
		require.Equal(t, []string{"1/0", "1/1", "1/2"}, values(pollOne(t, c)), "nothing from the paused partition")

		// A minute of Polls with only a paused partition holding records:
		// nothing comes, and the consumer stays in the group.
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		msgs, err := c.Poll(pctx)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Empty(t, msgs)
		require.Len(t, s.Groups(), 1)
		require.Equal(t, []strata.TopicPartition{t0, t1}, c.Assignment(), "Poll kept heartbeating: not evicted")

		// Resume wakes a Poll that waits, well before its PollWait.
		require.NoError(t, c.Pause(t1))
		got := make(chan []strata.Message, 1)
		go func() {
			msgs, _ := c.Poll(ctx)
			got <- msgs
		}()
		synctest.Wait()
		require.Empty(t, got, "both paused: Poll waits")
		woke := time.Now()
		require.NoError(t, c.Resume(t0, t0, t1), "resuming twice, or what is not paused, is fine")
		msgs = <-got
		require.Zero(t, time.Since(woke), "woken, not after PollWait")
		require.Equal(t, []string{"0/0", "0/1", "0/2"}, values(msgs), "from where it stopped")
		require.Empty(t, c.Paused())

		require.ErrorIs(t, c.Pause(t0, strata.TopicPartition{Topic: "nope", Partition: 0}), strata.ErrNotOwner)
		require.ErrorIs(t, c.Pause(strata.TopicPartition{Topic: "t", Partition: -1}), strata.ErrUnknownPartition)
		require.ErrorIs(t, c.Resume(strata.TopicPartition{Topic: "nope", Partition: 0}), strata.ErrNotOwner)
		require.Empty(t, c.Paused(), "a refused Pause pauses nothing")
	})
}

// TestConsumerPausedAcrossRebalance: a paused partition stays paused while
// it is with another consumer and when it comes back.
func TestConsumerPausedAcrossRebalance(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	t0, t1 := strata.TopicPartition{Topic: "t", Partition: 0}, strata.TopicPartition{Topic: "t", Partition: 1}
	opts := strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, PollWait: time.Millisecond}
	a, err := s.Consumer("g", []string{"t"}, opts)
	require.NoError(t, err)
	defer a.Close()
	fillParts(t, s, "t", 2, 1, time.Now())
	require.NoError(t, a.Pause(t1))
	require.Equal(t, []string{"0/0"}, values(pollOne(t, a)))

	b, err := s.Consumer("g", []string{"t"}, opts)
	require.NoError(t, err)
	fillParts(t, s, "t", 2, 1, time.Now())
	require.Equal(t, []string{"0/0"}, values(pollOne(t, a)), "a revokes t-1 and reads t-0 on")
	require.Equal(t, []strata.TopicPartition{t0}, a.Assignment())
	require.Equal(t, []string{"1/0", "1/0"}, values(pollOne(t, b)), "b, not paused, reads t-1")
	require.NoError(t, b.Commit(ctx))
	require.NoError(t, b.Close())

	fillParts(t, s, "t", 2, 1, time.Now())
	require.Equal(t, []string{"0/0"}, values(pollOne(t, a)), "t-1 is back, still paused")
	require.Equal(t, []strata.TopicPartition{t0, t1}, a.Assignment())
	require.Equal(t, []strata.TopicPartition{t1}, a.Paused())
	require.NoError(t, a.Resume(t1))
	require.Equal(t, []string{"1/0"}, values(pollOne(t, a)), "from b's position on")
}

func TestConsumerCommitMessages(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	require.NoError(t, s.CreateTopic("other", strata.TopicConfig{}))
	fillParts(t, s, "t", 2, 5, time.Now())
	fillParts(t, s, "other", 1, 1, time.Now())
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer c.Close()
	msgs := pollOne(t, c)
	require.Len(t, msgs, 10)
	byPart := map[int][]strata.Message{}
	for _, m := range msgs {
		byPart[m.Partition] = append(byPart[m.Partition], m)
	}
	committed := func() [2]int64 {
		var out [2]int64
		for p := range 2 {
			om, ok := s.Committed("g", "t", p)
			out[p] = -1
			if ok {
				out[p] = om.Offset
			}
		}
		return out
	}

	require.NoError(t, c.CommitMessages(ctx))
	require.Equal(t, [2]int64{-1, -1}, committed(), "no messages: no commit")
	require.NoError(t, c.CommitMessages(ctx, byPart[0][3], byPart[0][1], byPart[1][0]))
	require.Equal(t, [2]int64{4, 1}, committed(), "the highest per partition, plus one")
	require.NoError(t, c.CommitMessages(ctx, byPart[0][0]))
	require.Equal(t, [2]int64{1, 1}, committed(), "as kgo's CommitRecords: what it is given, even backwards")

	bad := []struct {
		name string
		m    strata.Message
		want error
	}{
		{"not owned", strata.Message{Topic: "other", Partition: 0}, strata.ErrNotOwner},
		{"past the end", strata.Message{Topic: "t", Partition: 0, Record: strata.Record{Offset: 5}}, strata.ErrOffsetOutOfRange},
		{"unknown partition", strata.Message{Topic: "t", Partition: 7}, strata.ErrUnknownPartition},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, c.CommitMessages(ctx, byPart[1][4], tc.m), tc.want)
			require.Equal(t, [2]int64{1, 1}, committed(), "a refused commit commits nothing")
		})
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, c.CommitMessages(ended, byPart[1][4]), context.Canceled)
	require.Equal(t, [2]int64{1, 1}, committed())
}

// TestConsumerOnLost: a consumer evicted for not polling learns at its
// next Poll which partitions it lost, through OnLost (not OnRevoked), and
// its commits of them are fenced; without OnLost, OnRevoked is told.
func TestConsumerOnLost(t *testing.T) {
	for _, withOnLost := range []bool{true, false} {
		t.Run(fmt.Sprintf("OnLost=%v", withOnLost), func(t *testing.T) {
			clk := newFakeClock()
			s := stratatest.Open(t, &strata.Options{Now: clk.Now, SessionTimeout: 10 * time.Second})
			require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
			fillParts(t, s, "t", 2, 3, clk.Now())
			var lost, revoked []strata.TopicPartition
			var lostCommit error
			opts := strata.ConsumerOptions{
				AutoOffsetReset: strata.ResetEarliest, PollWait: time.Millisecond,
				OnRevoked: func(ctx context.Context, c *strata.Consumer, parts []strata.TopicPartition) {
					revoked = append(revoked, parts...)
					lostCommit = c.Commit(ctx)
				},
			}
			if withOnLost {
				opts.OnLost = func(ctx context.Context, c *strata.Consumer, parts []strata.TopicPartition) {
					lost = append(lost, parts...)
					lostCommit = c.Commit(ctx)
				}
			}
			a, err := s.Consumer("g", []string{"t"}, opts)
			require.NoError(t, err)
			require.Len(t, pollOne(t, a), 6)
			clk.Add(11 * time.Second) // a's session expires
			b, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
			require.NoError(t, err)
			defer b.Close()
			require.Len(t, pollOne(t, b), 6, "b has everything, from the start: a committed nothing")

			fillParts(t, s, "t", 2, 1, clk.Now())
			ended, cancel := context.WithCancel(ctx)
			cancel()
			_, err = a.Poll(ended)
			require.ErrorIs(t, err, context.Canceled)
			parts := []strata.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}
			if withOnLost {
				require.Equal(t, parts, lost)
				require.Empty(t, revoked, "a loss is not a revoke")
			} else {
				require.Equal(t, parts, revoked, "without OnLost, OnRevoked is told")
			}
			require.ErrorIs(t, lostCommit, strata.ErrFenced, "a commit of lost partitions is fenced")
			require.Empty(t, a.Assignment(), "a joined again and owns nothing yet")
			require.NoError(t, a.Close())
		})
	}
}

// TestConsumerCloseLost: Close of a consumer that was evicted runs OnLost.
func TestConsumerCloseLost(t *testing.T) {
	clk := newFakeClock()
	s := stratatest.Open(t, &strata.Options{Now: clk.Now, SessionTimeout: 10 * time.Second})
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	fillParts(t, s, "t", 1, 1, clk.Now())
	var lost, revoked []strata.TopicPartition
	a, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{
		AutoOffsetReset: strata.ResetEarliest,
		OnRevoked: func(_ context.Context, _ *strata.Consumer, p []strata.TopicPartition) {
			revoked = append(revoked, p...)
		},
		OnLost: func(_ context.Context, _ *strata.Consumer, p []strata.TopicPartition) { lost = append(lost, p...) },
	})
	require.NoError(t, err)
	pollOne(t, a)
	clk.Add(11 * time.Second)
	require.NoError(t, a.Close())
	require.Equal(t, []strata.TopicPartition{{Topic: "t", Partition: 0}}, lost)
	require.Empty(t, revoked)
}

// TestConsumerCloseCommitsAfterAppContextEnds is the README's shutdown:
// the application's context ends, its loop returns, the deferred Close
// runs OnRevoked, and the commit made there lands, because OnRevoked's
// context is Close's own.
func TestConsumerCloseCommitsAfterAppContextEnds(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	fillParts(t, s, "t", 1, 4, time.Now())
	appCtx, stop := context.WithCancel(ctx)
	var cbCtx context.Context
	var commitErr error
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{
		AutoOffsetReset: strata.ResetEarliest,
		CloseTimeout:    time.Hour,
		OnRevoked: func(ctx context.Context, c *strata.Consumer, _ []strata.TopicPartition) {
			cbCtx = ctx
			commitErr = c.Commit(ctx)
		},
	})
	require.NoError(t, err)
	msgs, err := c.Poll(appCtx)
	require.NoError(t, err)
	require.Len(t, msgs, 4) // processed
	stop()                  // shutdown begins
	_, err = c.Poll(appCtx)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, c.Close())
	require.NoError(t, commitErr)
	om, ok := s.Committed("g", "t", 0)
	require.True(t, ok, "the commit in OnRevoked landed")
	require.Equal(t, int64(4), om.Offset)
	dl, ok := cbCtx.Deadline()
	require.True(t, ok, "bounded by CloseTimeout")
	require.Greater(t, time.Until(dl), 50*time.Minute)
	require.ErrorIs(t, cbCtx.Err(), context.Canceled, "and over once Close returned")
}

func TestConsumerClosedErrors(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	fillParts(t, s, "t", 1, 2, time.Now())
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	msgs := pollOne(t, c)
	id := c.MemberID()
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "twice is a no-op")
	tp := strata.TopicPartition{Topic: "t", Partition: 0}
	for name, call := range map[string]func() error{
		"Poll":           func() error { _, err := c.Poll(ctx); return err },
		"Commit":         func() error { return c.Commit(ctx) },
		"CommitOffsets":  func() error { return c.CommitOffsets(ctx, map[strata.TopicPartition]int64{tp: 1}) },
		"CommitMessages": func() error { return c.CommitMessages(ctx, msgs[0]) },
		"Seek":           func() error { return c.Seek(tp, 0) },
		"SeekTo":         func() error { return c.SeekTo(tp, strata.Earliest) },
		"Pause":          func() error { return c.Pause(tp) },
		"Resume":         func() error { return c.Resume(tp) },
		"DeadLetter":     func() error { return c.DeadLetter(ctx, "dlq", msgs[0], nil) },
		"Messages": func() error {
			for _, err := range c.Messages(ctx) {
				return err
			}
			return nil
		},
	} {
		t.Run(name, func(t *testing.T) { require.ErrorIs(t, call(), strata.ErrClosed) })
	}
	// With bad input, the closed consumer is reported first.
	foreign := strata.TopicPartition{Topic: "zzz", Partition: -1}
	bad := strata.Message{Topic: "zzz", Partition: -1, Record: strata.Record{Offset: -5}}
	for name, call := range map[string]func() error{
		"CommitOffsets":  func() error { return c.CommitOffsets(ctx, map[strata.TopicPartition]int64{foreign: -1}) },
		"CommitMessages": func() error { return c.CommitMessages(ctx, bad) },
		"Seek":           func() error { return c.Seek(foreign, -1) },
		"SeekTo":         func() error { return c.SeekTo(foreign, strata.OffsetSpec{}) },
		"Pause":          func() error { return c.Pause(foreign) },
		"Resume":         func() error { return c.Resume(foreign) },
		"DeadLetter":     func() error { return c.DeadLetter(ctx, "__x", bad, nil) },
	} {
		t.Run(name+" bad input", func(t *testing.T) { require.ErrorIs(t, call(), strata.ErrClosed) })
	}
	require.Empty(t, c.Assignment())
	require.Equal(t, id, c.MemberID())
	_, err = s.DescribeTopic("dlq")
	require.ErrorIs(t, err, strata.ErrUnknownTopic, "a refused DeadLetter creates nothing")
}

// TestCommitMessagesNamesTheMessage checks that a message CommitMessages
// cannot commit past is named by its own offset, not the offset after it,
// and that math.MaxInt64 is refused rather than overflowing; and that a
// topic the consumer does not subscribe to is ErrNotOwner whatever the
// offset.
func TestCommitMessagesNamesTheMessage(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	fillParts(t, s, "t", 1, 2, time.Now())
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer c.Close()
	pollOne(t, c)
	for _, off := range []int64{2, 1000, -1, math.MaxInt64, math.MinInt64} {
		err := c.CommitMessages(ctx, strata.Message{Topic: "t", Record: strata.Record{Offset: off}})
		require.ErrorIs(t, err, strata.ErrOffsetOutOfRange, "offset %d", off)
		require.Equal(t, fmt.Sprintf("strata: commit of the message at offset %d of t-0: out of range [0, 2): offset out of range", off), err.Error())
	}
	require.NoError(t, c.CommitMessages(ctx, strata.Message{Topic: "t", Record: strata.Record{Offset: 1}}))
	om, ok := s.Committed("g", "t", 0)
	require.True(t, ok)
	require.Equal(t, int64(2), om.Offset)
	for _, off := range []int64{0, -5, math.MaxInt64} {
		err := c.CommitMessages(ctx, strata.Message{Topic: "u", Record: strata.Record{Offset: off}})
		require.ErrorIs(t, err, strata.ErrNotOwner, "offset %d", off)
		err = c.CommitOffsets(ctx, map[strata.TopicPartition]int64{{Topic: "u"}: off})
		require.ErrorIs(t, err, strata.ErrNotOwner, "offset %d", off)
	}
}

// TestSeekToZeroSpec checks that the zero OffsetSpec is refused, not taken
// for AtTime(1970) (the start) or any other spec, and moves nothing.
func TestSeekToZeroSpec(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	fillParts(t, s, "t", 1, 3, time.Now())
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer c.Close()
	pollOne(t, c)
	tp := strata.TopicPartition{Topic: "t", Partition: 0}
	err = c.SeekTo(tp, strata.OffsetSpec{})
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
	require.EqualError(t, err, "strata: seek of t-0: the zero OffsetSpec names no offset (use Earliest, Latest, AtTime or MaxTimestamp): invalid config")
	_, err = s.ListOffsets("t", 0, strata.OffsetSpec{})
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
	off, err := s.ListOffsets("t", 0, strata.AtTime(time.Unix(0, 0)))
	require.NoError(t, err)
	require.Equal(t, int64(0), off, "AtTime(1970) is still a spec")
	require.NoError(t, c.Commit(ctx))
	om, _ := s.Committed("g", "t", 0)
	require.Equal(t, int64(3), om.Offset, "the refused seek moved nothing")
}

// TestConsumerCommitAfterSeekOfWaitingPartition: Commit commits where a
// Seek put a partition that ResetNone left waiting, before any Poll reads
// it.
func TestConsumerCommitAfterSeekOfWaitingPartition(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	fillParts(t, s, "t", 1, 5, time.Now())
	tp := strata.TopicPartition{Topic: "t", Partition: 0}
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetNone})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Poll(ctx)
	require.ErrorIs(t, err, strata.ErrNoOffset)
	require.NoError(t, c.Seek(tp, 2))
	require.NoError(t, c.Commit(ctx))
	om, ok := s.Committed("g", "t", 0)
	require.True(t, ok, "the sought position is committed")
	require.Equal(t, int64(2), om.Offset)
}
