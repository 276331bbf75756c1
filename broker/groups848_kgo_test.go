package broker_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// startConsumer848 starts a kgo consumer of topic in group with KIP-848's
// protocol (kgo.ServerSideBalancer), counting what it consumes in seen.
func startConsumer848(t *testing.T, srv *broker.Server, group, topic string, seen *counter, opts ...kgo.Opt) *groupConsumer {
	t.Helper()
	return startGroupConsumerOf(t, srv, group, topic, kgo.RangeBalancer(), seen, nil, append([]kgo.Opt{kgo.ServerSideBalancer()}, opts...)...)
}

// TestKgo848Group runs kgo consumers of KIP-848's protocol: one consumes
// everything, a second joins and takes half of the partitions (the first
// revokes them before the second is handed them), then leaves and the
// first takes them back; every record is consumed once, the commits are
// the store's, and the members are the store's group coordinator's.
func TestKgo848Group(t *testing.T) {
	s, srv := serve(t, &broker.Options{GroupHeartbeatInterval: 50 * time.Millisecond})
	var seen counter
	shareAndGiveBack(t, s, 4, &seen, func() (groupMember, func()) {
		gc := startConsumer848(t, srv, "billing", "orders", &seen)
		return gc, gc.stop
	}, func() {
		require.Len(t, s.GroupMembers("billing"), 1, "the wire member is the store's")
	})
}

// TestKgo848WithConsumer puts a kgo consumer of KIP-848's protocol and a
// strata.Consumer of the process in one group: they share the partitions
// in the store's rebalance, and every record is consumed once, whichever
// member leaves.
func TestKgo848WithConsumer(t *testing.T) {
	s, srv := serve(t, &broker.Options{GroupHeartbeatInterval: 50 * time.Millisecond})
	const parts = 4
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: parts}))
	produce := orderProducer(t, s, "orders", parts)
	var seen counter
	produce(100)
	a := startConsumer848(t, srv, "billing", "orders", &seen)
	defer a.stop()
	eventually(t, "the kgo consumer to consume everything", func() bool { return seen.len() == 100 })

	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var owned atomic.Int64
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			pctx, pcancel := context.WithTimeout(ctx, 20*time.Millisecond)
			recs, err := c.Poll(pctx)
			pcancel()
			for _, r := range recs {
				seen.add(string(r.Value))
			}
			if len(recs) > 0 {
				if err := c.Commit(ctx); err != nil && ctx.Err() == nil {
					t.Errorf("commit: %v", err)
				}
			}
			owned.Store(int64(len(c.Assignment())))
			_ = err
		}
	}()
	eventually(t, "the partitions to be shared", func() bool { return a.owned() == parts/2 && owned.Load() == parts/2 })
	produce(100)
	eventually(t, "the second hundred", func() bool { return seen.len() == 200 })
	a.stop()
	eventually(t, "the store's consumer to own every partition", func() bool { return owned.Load() == parts })
	produce(100)
	eventually(t, "the third hundred", func() bool { return seen.len() == 300 })
	cancel()
	<-done
	require.NoError(t, c.Close())

	seen.requireOnce(t)
}

// TestKadmDescribeConsumerGroups describes a group of a kgo KIP-848
// consumer and a strata.Consumer with kadm's DescribeConsumerGroups
// (ConsumerGroupDescribe); a classic group is GROUP_ID_NOT_FOUND.
func TestKadmDescribeConsumerGroups(t *testing.T) {
	s, srv := serve(t, &broker.Options{GroupHeartbeatInterval: 50 * time.Millisecond})
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}))
	var seen counter
	a := startConsumer848(t, srv, "billing", "orders", &seen, kgo.ClientID("kgo-848"))
	defer a.stop()
	eventually(t, "the kgo consumer to own both partitions", func() bool { return a.owned() == 2 })
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	eventually(t, "the partitions to be shared", func() bool {
		pctx, pcancel := context.WithTimeout(ctx, 10*time.Millisecond)
		_, _ = c.Poll(pctx)
		pcancel()
		return a.owned() == 1 && len(c.Assignment()) == 1
	})

	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	described, err := adm.DescribeConsumerGroups(ctx, "billing")
	require.NoError(t, err)
	g := described["billing"]
	require.NoError(t, g.Err)
	require.Len(t, g.Members, 2)
	require.Positive(t, g.Epoch)
	memberID, _ := a.cl.GroupMetadata()
	var wire, local kadm.ConsumerGroupMember
	for _, m := range g.Members {
		if m.MemberID == memberID {
			wire = m
		} else {
			local = m
		}
	}
	require.Equal(t, "kgo-848", wire.ClientID)
	require.Equal(t, int8(1), wire.MemberType)
	require.Equal(t, []string{"orders"}, wire.SubscribedTopics)
	require.Len(t, wire.Assignment["orders"], 1)
	require.Equal(t, c.MemberID(), local.MemberID)
	require.Len(t, local.TargetAssignment["orders"], 1)
	all, err := adm.DescribeConsumerGroups(ctx)
	require.NoError(t, err)
	require.Contains(t, all, "billing", "ListGroups types the group consumer")

	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 1}))
	classic := startGroupConsumer(t, srv, "classic", "events", kgo.RangeBalancer(), &seen)
	defer classic.stop()
	eventually(t, "the classic consumer to join", func() bool { return classic.owned() == 1 })
	described, err = adm.DescribeConsumerGroups(ctx, "classic", "nothing")
	require.NoError(t, err)
	require.ErrorIs(t, described["classic"].Err, kerr.GroupIDNotFound)
	require.ErrorIs(t, described["nothing"].Err, kerr.GroupIDNotFound)
}

// TestKgo848Regex consumes with kgo's regex subscription over KIP-848
// (SubscribedTopicRegex, which the broker matches): the topics that
// match, one created after the join among them, and not the others
// (FetchMaxWait short, so that kgo's fetch in flight, for the first
// topic, does not hold the new one back for 5 s).
func TestKgo848Regex(t *testing.T) {
	s, srv := serve(t, &broker.Options{GroupHeartbeatInterval: 50 * time.Millisecond})
	for _, name := range []string{"orders-eu", "payments"} {
		require.NoError(t, s.CreateTopic(name, strata.TopicConfig{Partitions: 2}))
		_, err := s.AppendTo(context.Background(), name, 0, strata.Record{Value: []byte(name)})
		require.NoError(t, err)
	}
	var seen counter
	a := startConsumer848(t, srv, "billing", "orders-.*", &seen, kgo.ConsumeRegex(), kgo.MetadataMinAge(50*time.Millisecond), kgo.MetadataMaxAge(200*time.Millisecond), kgo.FetchMaxWait(100*time.Millisecond))
	defer a.stop()
	eventually(t, "the matching topic's record", func() bool { return seen.len() == 1 })
	require.NoError(t, s.CreateTopic("orders-us", strata.TopicConfig{Partitions: 1}))
	_, err := s.AppendTo(context.Background(), "orders-us", 0, strata.Record{Value: []byte("orders-us")})
	require.NoError(t, err)
	eventually(t, "the new topic's record", func() bool { return seen.len() == 2 })
	seen.mu.Lock()
	require.Equal(t, map[string]int{"orders-eu": 1, "orders-us": 1}, seen.n)
	seen.mu.Unlock()
	members := s.GroupMembers("billing")
	require.Len(t, members, 1)
	require.Equal(t, []string{"orders-eu", "orders-us"}, members[0].Topics)
}
