package broker_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratalog/strata"
)

// TestKgoGroupMemberDisconnects: a client that joins a group of two kgo
// consumers and drops its connection while its JoinGroup waits for the
// rebalance is a member of the next generation, given partitions it
// never syncs for; after its session timeout (6 s) the group rebalances
// without it and the kgo consumers take every partition back and consume
// every record. The claim goes with the last member: the store's
// consumers may then use the group.
func TestKgoGroupMemberDisconnects(t *testing.T) {
	s, srv := serve(t, nil)
	const parts = 4
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: parts}))
	produce := orderProducer(t, s, "orders", parts)
	var seen counter
	produce(100)
	a := startGroupConsumer(t, srv, "billing", "orders", kgo.RangeBalancer(), &seen)
	defer a.stop()
	b := startGroupConsumer(t, srv, "billing", "orders", kgo.RangeBalancer(), &seen)
	defer b.stop()
	eventually(t, "the partitions to be shared", func() bool { return a.owned()+b.owned() == parts && a.owned() > 0 && b.owned() > 0 })

	dead := dial(t, srv)
	req := joinReq(3, "billing", "", nil, "range")
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 6000, 6000
	dead.send(req)
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	eventually(t, "the third member to join", func() bool {
		gs, err := adm.DescribeGroups(context.Background(), "billing")
		return err == nil && len(gs["billing"].Members) == 3
	})
	dead.nc.Close()
	eventually(t, "a generation with the silent member", func() bool {
		gs, err := adm.DescribeGroups(context.Background(), "billing")
		return err == nil && gs["billing"].State == "CompletingRebalance" || a.owned()+b.owned() < parts
	})
	eventually(t, "a generation without it", func() bool {
		gs, err := adm.DescribeGroups(context.Background(), "billing")
		return err == nil && gs["billing"].State == "Stable" && len(gs["billing"].Members) == 2 && a.owned()+b.owned() == parts
	})
	produce(100)
	eventually(t, "every record consumed", func() bool { return seen.len() == 200 })

	a.stop()
	b.stop()
	eventuallyStoreGroup(t, s, "billing", "orders")
}

// TestKgoGroupChurn: six kgo consumers (cooperative-sticky) start at
// once, three leave at once while records keep coming, three more join,
// then all leave; every record is consumed, the group's commits reach
// the end, and the group is the store's again.
func TestKgoGroupChurn(t *testing.T) {
	s, srv := serve(t, nil)
	const parts = 12
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: parts}))
	produce := orderProducer(t, s, "orders", parts)
	var seen counter
	produce(300)
	var members []*groupConsumer
	start := func(n int) {
		for range n {
			members = append(members, startGroupConsumer(t, srv, "billing", "orders", kgo.CooperativeStickyBalancer(), &seen))
		}
	}
	owned := func() int {
		n := 0
		for _, m := range members {
			n += m.owned()
		}
		return n
	}
	stop := func(ms []*groupConsumer) {
		done := make(chan struct{})
		for _, m := range ms {
			go func() {
				m.stop()
				done <- struct{}{}
			}()
		}
		for range ms {
			<-done
		}
	}
	start(6)
	defer func() { stop(members) }()
	eventually(t, "six members to share the partitions", func() bool {
		for _, m := range members {
			if m.owned() == 0 {
				return false
			}
		}
		return owned() == parts
	})
	stop(members[:3])
	members = members[3:]
	produce(300)
	start(3)
	produce(300)
	eventually(t, "every record consumed", func() bool { return seen.len() == 900 })
	eventually(t, "the partitions shared again", func() bool { return owned() == parts })
	eventuallyCommitted(t, s, "billing", "orders")
	stop(members)
	eventuallyStoreGroup(t, s, "billing", "orders")
}
