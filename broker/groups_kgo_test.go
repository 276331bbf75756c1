package broker_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// groupConsumer is a kgo consumer of a group that processes each record
// once: it commits what it polled before it lets a rebalance happen
// (BlockRebalanceOnPoll), so that the next owner of a partition starts
// after it.
type groupConsumer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	stopOnce sync.Once

	mu       sync.Mutex
	assigned map[int32]bool
}

// startGroupConsumer starts a consumer of topic in group with balancer,
// counting every value it consumes in seen; a failed commit fails the
// test.
func startGroupConsumer(t *testing.T, srv *broker.Server, group, topic string, balancer kgo.GroupBalancer, seen *counter) *groupConsumer {
	t.Helper()
	return startGroupConsumerOf(t, srv, group, topic, balancer, seen, nil)
}

// startGroupConsumerOf is startGroupConsumer that counts failed commits
// in commitErrs, if not nil, instead of failing, with kgo's options
// opts as well.
func startGroupConsumerOf(t *testing.T, srv *broker.Server, group, topic string, balancer kgo.GroupBalancer, seen *counter, commitErrs *atomic.Int64, opts ...kgo.Opt) *groupConsumer {
	t.Helper()
	gc := &groupConsumer{done: make(chan struct{}), assigned: map[int32]bool{}}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(srv.Addr().String()),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.Balancers(balancer),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			gc.mu.Lock()
			defer gc.mu.Unlock()
			for _, p := range m[topic] {
				gc.assigned[p] = true
			}
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			gc.mu.Lock()
			defer gc.mu.Unlock()
			for _, p := range m[topic] {
				delete(gc.assigned, p)
			}
		}),
	}, opts...)...)
	require.NoError(t, err)
	gc.cl = cl
	ctx, cancel := context.WithCancel(context.Background())
	gc.cancel = cancel
	go func() {
		defer close(gc.done)
		for ctx.Err() == nil {
			fs := cl.PollRecords(ctx, 50)
			recs := fs.Records()
			for _, r := range recs {
				seen.add(string(r.Value))
			}
			if len(recs) > 0 {
				switch err := commitCounted(ctx, cl, recs); {
				case err == nil:
				case commitErrs != nil:
					commitErrs.Add(1)
				default:
					t.Errorf("commit: %v", err)
				}
			}
			cl.AllowRebalance()
		}
	}()
	return gc
}

// commitCounted commits recs, which the consumer has counted, even if
// stop has cancelled ctx since it polled them: a member that leaves
// without committing what it consumed hands those records to the
// partitions' next owner again, from the last committed offset. Kafka's
// consumers are at least once (kgo's DisableAutoCommit and Close: a
// consumer with its own OnPartitionsRevoked commits before it closes),
// and the tests count each record once only of consumers that commit
// what they count before they leave.
func commitCounted(ctx context.Context, cl *kgo.Client, recs []*kgo.Record) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return cl.CommitRecords(ctx, recs...)
}

// owned returns how many partitions the consumer owns.
func (gc *groupConsumer) owned() int {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	return len(gc.assigned)
}

// stop stops polling and leaves the group; stopping again does
// nothing.
func (gc *groupConsumer) stop() {
	gc.cancel()
	<-gc.done
	gc.stopOnce.Do(gc.cl.Close)
}

// TestKgoGroup runs kgo consumers of a group with the cooperative-sticky
// and the range balancer: one consumes everything, a second joins and
// takes half of the partitions, then leaves and the first takes them
// back; every record is consumed once, and the commits are the store's
// (Store.Committed, Lag).
func TestKgoGroup(t *testing.T) {
	for _, tt := range []struct {
		name     string
		balancer kgo.GroupBalancer
	}{
		{"cooperative-sticky", kgo.CooperativeStickyBalancer()},
		{"range", kgo.RangeBalancer()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := serve(t, nil)
			var seen counter
			shareAndGiveBack(t, s, 4, &seen, func() (groupMember, func()) {
				gc := startGroupConsumer(t, srv, "billing", "orders", tt.balancer, &seen)
				return gc, gc.stop
			}, nil)
			_, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{})
			require.ErrorIs(t, err, strata.ErrGroupClaimed, "the group has a member over the wire")
		})
	}
}

// TestKgoGroupServerRestart checks that a kgo group consumer outlives a
// restart of the Server: the new Server knows no members (group state is
// in memory; Kafka keeps it in __consumer_offsets), so the consumer's
// commits are UNKNOWN_MEMBER_ID until it joins again, and it goes on from
// its committed offsets; every record is consumed, those whose commits
// failed perhaps twice.
func TestKgoGroupServerRestart(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	srv, err := broker.Start(s, &broker.Options{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	addr := srv.Addr().String()
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}))
	produce := orderProducer(t, s, "orders", 2)
	var seen counter
	var commitErrs atomic.Int64
	produce(100)
	c := startGroupConsumerOf(t, srv, "billing", "orders", kgo.RangeBalancer(), &seen, &commitErrs)
	defer c.stop()
	eventually(t, "the first hundred", func() bool { return seen.len() == 100 })
	eventually(t, "the first hundred committed", func() bool {
		om0, _ := s.Committed("billing", "orders", 0)
		om1, _ := s.Committed("billing", "orders", 1)
		return om0.Offset == 50 && om1.Offset == 50
	})
	require.NoError(t, srv.Close())
	produce(100)
	srv, err = broker.Start(s, &broker.Options{Addr: addr})
	require.NoError(t, err)
	defer srv.Close()
	eventually(t, "the second hundred, after the restart", func() bool { return seen.len() == 200 })
	eventually(t, "the commits of every record", func() bool {
		lag, err := s.Lag(context.Background(), "billing", "orders")
		require.NoError(t, err)
		return lag[0].Lag == 0 && lag[1].Lag == 0
	})
	c.stop()
	seen.mu.Lock()
	defer seen.mu.Unlock()
	dups := 0
	for v, n := range seen.n {
		if n > 1 {
			dups++
			require.Equal(t, 2, n, "%s consumed %d times", v, n)
			var i int
			_, err := fmt.Sscanf(v, "order %d", &i)
			require.NoError(t, err)
			require.GreaterOrEqual(t, i, 100, "a record committed before the restart consumed again")
		}
	}
	t.Logf("%d commits failed after the restart, %d records consumed twice", commitErrs.Load(), dups)
}
