package broker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/broker"
)

// saramaMember is one member of a Sarama consumer group: it counts every
// value it consumes and marks it consumed; Sarama commits the marks every
// 50ms and when a rebalance ends the session.
type saramaMember struct {
	seen   *counter
	mu     sync.Mutex
	claims int // partitions claimed in the current session
}

func (m *saramaMember) Setup(sess sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claims = 0
	for _, parts := range sess.Claims() {
		m.claims += len(parts)
	}
	return nil
}

func (m *saramaMember) Cleanup(sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claims = 0
	return nil
}

func (m *saramaMember) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		m.seen.add(string(msg.Value))
		sess.MarkMessage(msg, "")
	}
	return nil
}

func (m *saramaMember) owned() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.claims
}

// startSaramaMember runs a member of group until the returned stop is
// called; stop leaves the group.
func startSaramaMember(t *testing.T, srv *broker.Server, group, topic string, seen *counter) (*saramaMember, func()) {
	t.Helper()
	c := saramaConfig()
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	c.Consumer.Offsets.AutoCommit.Interval = 50 * time.Millisecond
	c.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange()}
	c.Consumer.Group.Heartbeat.Interval = 100 * time.Millisecond
	cg, err := sarama.NewConsumerGroup([]string{srv.Addr().String()}, group, c)
	require.NoError(t, err)
	m := &saramaMember{seen: seen}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, m); err != nil && ctx.Err() == nil {
				t.Errorf("sarama consume: %v", err)
				return
			}
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-done
			require.NoError(t, cg.Close())
		})
	}
	t.Cleanup(stop)
	return m, stop
}

// TestSaramaConsumerGroup runs Sarama consumer group members (range):
// one consumes everything, a second joins and takes half of the
// partitions, leaves, and the first takes them back; every record is
// consumed once and the group's commits reach the end (Store.Lag).
func TestSaramaConsumerGroup(t *testing.T) {
	s, srv := serve(t, nil)
	var seen counter
	shareAndGiveBack(t, s, 4, &seen, func() (groupMember, func()) {
		return startSaramaMember(t, srv, "billing", "orders", &seen)
	}, nil)
}
