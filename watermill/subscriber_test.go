package watermill_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stratalog/strata"
	"github.com/stretchr/testify/require"

	stratawm "github.com/stratalog/strata/watermill"
)

// publish publishes n messages "0", "1", ... with UUIDs "m0", "m1", ...
func publish(t *testing.T, st *strata.Store, topic string, from, n int) {
	t.Helper()
	pub, err := stratawm.NewPublisher(st, stratawm.PublisherConfig{}, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, pub.Close()) }()
	for i := from; i < from+n; i++ {
		require.NoError(t, pub.Publish(topic, message.NewMessage(fmt.Sprintf("m%d", i), fmt.Appendf(nil, "%d", i))))
	}
}

// next returns the next message of ch, failing t after a while.
func next(t *testing.T, ch <-chan *message.Message) *message.Message {
	t.Helper()
	select {
	case msg, ok := <-ch:
		require.True(t, ok, "the channel closed")
		return msg
	case <-time.After(10 * time.Second):
		t.Fatal("no message")
		return nil
	}
}

func newSubscriber(t *testing.T, st *strata.Store, group string) *stratawm.Subscriber {
	t.Helper()
	sub, err := stratawm.NewSubscriber(st, stratawm.SubscriberConfig{ConsumerGroup: group, NackResendSleep: -1}, nil)
	require.NoError(t, err)
	return sub
}

// TestNackRedeliversInOrder: a nacked message comes again, then the ones
// after it, in order; with and without a group.
func TestNackRedeliversInOrder(t *testing.T) {
	for _, group := range []string{"g", ""} {
		t.Run(fmt.Sprintf("group=%q", group), func(t *testing.T) {
			st := openStore(t)
			publish(t, st, "orders", 0, 5)
			sub := newSubscriber(t, st, group)
			defer func() { require.NoError(t, sub.Close()) }()
			ch, err := sub.Subscribe(context.Background(), "orders")
			require.NoError(t, err)

			var got []string
			for _, nack := range []bool{false, true, true, false, false, true, false, false} {
				msg := next(t, ch)
				got = append(got, msg.UUID)
				if nack {
					require.True(t, msg.Nack())
					select {
					case <-msg.Context().Done():
					case <-time.After(10 * time.Second):
						t.Fatal("a nacked message's context did not end")
					}
				} else {
					require.True(t, msg.Ack())
				}
			}
			require.Equal(t, []string{"m0", "m1", "m1", "m1", "m2", "m3", "m3", "m4"}, got)
		})
	}
}

// TestCloseCommits: what a group subscription acked is the group's
// committed position after Close, in the store reopened; a new
// subscription of the group resumes there, and the message handed out but
// not acked comes again.
func TestCloseCommits(t *testing.T) {
	dir := t.TempDir()
	st, err := strata.Open(dir, nil)
	require.NoError(t, err)
	publish(t, st, "orders", 0, 5)
	sub := newSubscriber(t, st, "billing")
	ch, err := sub.Subscribe(context.Background(), "orders")
	require.NoError(t, err)
	for range 3 {
		require.True(t, next(t, ch).Ack())
	}
	held := next(t, ch) // m3: handed out, never acked
	require.Equal(t, "m3", held.UUID)
	require.NoError(t, sub.Close())
	_, open := <-ch
	require.False(t, open, "the channel stays open after Close")
	select {
	case <-held.Context().Done():
	default:
		t.Fatal("the context of a message handed out did not end at Close")
	}
	require.NoError(t, st.Close())

	st, err = strata.Open(dir, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	committed, ok := st.Committed("billing", "orders", 0)
	require.True(t, ok)
	require.Equal(t, int64(3), committed.Offset)

	sub = newSubscriber(t, st, "billing")
	defer func() { require.NoError(t, sub.Close()) }()
	ch, err = sub.Subscribe(context.Background(), "orders")
	require.NoError(t, err)
	for _, want := range []string{"m3", "m4"} {
		msg := next(t, ch)
		require.Equal(t, want, msg.UUID)
		require.True(t, msg.Ack())
	}
}

// TestAckRacingClose: a message acked just before Close is committed.
func TestAckRacingClose(t *testing.T) {
	st := openStore(t)
	publish(t, st, "orders", 0, 20)
	for range 20 {
		sub := newSubscriber(t, st, "audit")
		ch, err := sub.Subscribe(context.Background(), "orders")
		require.NoError(t, err)
		msg := next(t, ch)
		committed, _ := st.Committed("audit", "orders", 0)
		require.Equal(t, fmt.Sprintf("m%d", committed.Offset), msg.UUID)
		require.True(t, msg.Ack())
		require.NoError(t, sub.Close())
		after, ok := st.Committed("audit", "orders", 0)
		require.True(t, ok)
		require.Equal(t, committed.Offset+1, after.Offset, "an Ack before Close was not committed")
	}
}

// TestInitialOffsetLatest: with Latest, a subscription delivers only what
// is published after it started, in a group (a group without commits) and
// without.
func TestInitialOffsetLatest(t *testing.T) {
	for _, group := range []string{"g", ""} {
		t.Run(fmt.Sprintf("group=%q", group), func(t *testing.T) {
			st := openStore(t)
			publish(t, st, "orders", 0, 3)
			sub, err := stratawm.NewSubscriber(st, stratawm.SubscriberConfig{ConsumerGroup: group, InitialOffset: stratawm.Latest}, nil)
			require.NoError(t, err)
			defer func() { require.NoError(t, sub.Close()) }()
			ch, err := sub.Subscribe(context.Background(), "orders")
			require.NoError(t, err)
			publish(t, st, "orders", 3, 1)
			msg := next(t, ch)
			require.Equal(t, "m3", msg.UUID)
			msg.Ack()
		})
	}
}

// TestTopicsOnDemand: Subscribe creates a missing topic with the
// subscriber's config; an existing one is used as it is.
func TestTopicsOnDemand(t *testing.T) {
	st := openStore(t)
	require.NoError(t, st.CreateTopic("existing", strata.TopicConfig{Partitions: 2}))
	sub, err := stratawm.NewSubscriber(st, stratawm.SubscriberConfig{Topic: strata.TopicConfig{Partitions: 3}}, nil)
	require.NoError(t, err)
	for _, topic := range []string{"existing", "fresh"} {
		_, err := sub.Subscribe(context.Background(), topic)
		require.NoError(t, err)
	}
	require.NoError(t, sub.SubscribeInitialize("initialized"))
	for topic, want := range map[string]int{"existing": 2, "fresh": 3, "initialized": 3} {
		d, err := st.DescribeTopic(topic)
		require.NoError(t, err)
		require.Len(t, d.Partitions, want, topic)
	}
	require.NoError(t, sub.Close())
	_, err = sub.Subscribe(context.Background(), "fresh")
	require.ErrorIs(t, err, stratawm.ErrSubscriberClosed)
	require.NoError(t, sub.Close(), "closing twice")
}

// TestBadConfig: a config the subscriber or publisher cannot use is an
// error at construction.
func TestBadConfig(t *testing.T) {
	st := openStore(t)
	for name, cfg := range map[string]stratawm.SubscriberConfig{
		"initial offset":   {InitialOffset: 7},
		"max poll records": {MaxPollRecords: -1},
		"topic config":     {Topic: strata.TopicConfig{Partitions: -1}},
	} {
		_, err := stratawm.NewSubscriber(st, cfg, nil)
		require.Error(t, err, name)
	}
	_, err := stratawm.NewPublisher(st, stratawm.PublisherConfig{Topic: strata.TopicConfig{Partitions: -1}}, nil)
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
	_, err = stratawm.NewPublisher(nil, stratawm.PublisherConfig{}, nil)
	require.Error(t, err)
	sub, err := stratawm.NewSubscriber(st, stratawm.SubscriberConfig{ConsumerGroup: "g"}, nil)
	require.NoError(t, err)
	_, err = sub.Subscribe(context.Background(), "bad/topic")
	require.ErrorIs(t, err, strata.ErrInvalidTopic)
	require.NoError(t, sub.Close())
}

// TestPartitionsSideBySide: a group subscription delivers a partition's
// messages while a message of another partition waits for its Ack, and
// each partition's in order.
func TestPartitionsSideBySide(t *testing.T) {
	st := openStore(t)
	require.NoError(t, st.CreateTopic("orders", strata.TopicConfig{Partitions: 2}))
	for i := range 6 {
		_, err := st.AppendTo(context.Background(), "orders", i%2, strata.Record{
			Value:   []byte("x"),
			Headers: []strata.Header{{Key: stratawm.UUIDHeaderKey, Value: fmt.Appendf(nil, "p%d-%d", i%2, i/2)}},
		})
		require.NoError(t, err)
	}
	sub := newSubscriber(t, st, "g")
	defer func() { require.NoError(t, sub.Close()) }()
	ch, err := sub.Subscribe(context.Background(), "orders")
	require.NoError(t, err)

	first := next(t, ch)
	p, _ := stratawm.MessagePartitionFromCtx(first.Context())
	other := 1 - p
	// first stays unacked: the other partition's three come all the same.
	for i := range 3 {
		msg := next(t, ch)
		require.Equal(t, fmt.Sprintf("p%d-%d", other, i), msg.UUID)
		require.True(t, msg.Ack())
	}
	select {
	case msg := <-ch:
		t.Fatalf("%s delivered before %s was acked", msg.UUID, first.UUID)
	case <-time.After(50 * time.Millisecond):
	}
	require.Equal(t, fmt.Sprintf("p%d-0", p), first.UUID)
	require.True(t, first.Ack())
	for i := 1; i < 3; i++ {
		msg := next(t, ch)
		require.Equal(t, fmt.Sprintf("p%d-%d", p, i), msg.UUID)
		require.True(t, msg.Ack())
	}
}
