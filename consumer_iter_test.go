package strata_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

func TestConsumerMessages(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
	fillParts(t, s, "t", 2, 4, time.Now())
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer c.Close()
	committed := func(p int) int64 {
		om, _ := s.Committed("g", "t", p)
		return om.Offset
	}

	// One Poll fetches all eight; the loop stops at the third, committing
	// there: the commit covers what was yielded, not what was fetched.
	var got []string
	for m, err := range c.Messages(ctx) {
		require.NoError(t, err)
		got = append(got, string(m.Value))
		require.NoError(t, c.Commit(ctx))
		if len(got) == 3 {
			break
		}
	}
	require.Len(t, got, 3)
	require.Equal(t, "0/2", got[2], "t-0 first")
	require.Equal(t, int64(3), committed(0), "through the message in hand")
	require.Zero(t, committed(1), "nothing yielded from t-1 yet")

	// Ranging again goes on right after the last message yielded.
	for m, err := range c.Messages(ctx) {
		require.NoError(t, err)
		got = append(got, string(m.Value))
		if m.Partition == 1 && m.Offset == 0 {
			require.NoError(t, c.Pause(strata.TopicPartition{Topic: "t", Partition: 1}))
		}
		if len(got) == 5 {
			break
		}
	}
	require.Equal(t, []string{"0/0", "0/1", "0/2", "0/3", "1/0"}, got[:5])

	// t-1, paused in the loop, yields nothing more; resumed, it goes on
	// after 1/0.
	fillParts(t, s, "t", 1, 1, time.Now()) // 0/0 again, at offset 4 of t-0
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var more []string
	for m, err := range c.Messages(pctx) {
		if err != nil {
			require.ErrorIs(t, err, context.Canceled)
			break
		}
		more = append(more, string(m.Value))
		cancel()
	}
	require.Equal(t, []string{"0/0"}, more)
	require.NoError(t, c.Resume(strata.TopicPartition{Topic: "t", Partition: 1}))
	more = nil
	for m, err := range c.Messages(ctx) {
		require.NoError(t, err)
		more = append(more, string(m.Value))
		if len(more) == 3 {
			break
		}
	}
	require.Equal(t, []string{"1/1", "1/2", "1/3"}, more)
	require.NoError(t, c.Commit(ctx))
	require.Equal(t, int64(4), committed(1))
	require.Equal(t, int64(5), committed(0))
}

// TestConsumerMessagesSeekInLoop: a Seek in the loop body wins over the
// rest of the partition's fetched messages.
func TestConsumerMessagesSeekInLoop(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	fillParts(t, s, "t", 1, 5, time.Now())
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer c.Close()
	var got []string
	sought := false
	for m, err := range c.Messages(ctx) {
		require.NoError(t, err)
		got = append(got, string(m.Value))
		if m.Offset == 1 && !sought {
			sought = true
			require.NoError(t, c.Seek(strata.TopicPartition{Topic: "t", Partition: 0}, 0))
		}
		if len(got) == 7 {
			break
		}
	}
	require.Equal(t, []string{"0/0", "0/1", "0/0", "0/1", "0/2", "0/3", "0/4"}, got)
}
