package broker_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// cgReq is a ConsumerGroupHeartbeat v1 of member at epoch; epoch 0
// subscribes to topics (a join).
func cgReq(group, member string, epoch int32, topics ...string) *kmsg.ConsumerGroupHeartbeatRequest {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.SetVersion(1)
	req.Group, req.MemberID, req.MemberEpoch = group, member, epoch
	req.RebalanceTimeoutMillis = -1
	if epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		req.SubscribedTopicNames = append([]string{}, topics...)
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	return req
}

// owning sets req's Topics to the partitions of topic id.
func owning(req *kmsg.ConsumerGroupHeartbeatRequest, id [16]byte, parts ...int32) *kmsg.ConsumerGroupHeartbeatRequest {
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if len(parts) > 0 {
		t := kmsg.NewConsumerGroupHeartbeatRequestTopic()
		t.TopicID, t.Partitions = id, parts
		req.Topics = append(req.Topics, t)
	}
	return req
}

func (c *rawClient) cg(req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	c.t.Helper()
	return c.roundTrip(req).(*kmsg.ConsumerGroupHeartbeatResponse)
}

// assigned returns the partitions of topic id in resp's assignment; nil
// if it has none.
func assigned(t *testing.T, resp *kmsg.ConsumerGroupHeartbeatResponse, id [16]byte) []int32 {
	t.Helper()
	require.NotNil(t, resp.Assignment, "an assignment")
	var out []int32
	for _, at := range resp.Assignment.Topics {
		require.Equal(t, id, at.TopicID)
		out = append(out, at.Partitions...)
	}
	return out
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// serveClock is serve with a store on clock.
func serveClock(t *testing.T, clock *fakeClock) (*strata.Store, *broker.Server) {
	t.Helper()
	s, err := strata.Open(t.TempDir(), &strata.Options{Now: clock.Now})
	require.NoError(t, err)
	srv, err := broker.Start(s, &broker.Options{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		require.NoError(t, s.Close())
	})
	return s, srv
}

// TestConsumerGroupHeartbeatReconcile walks KIP-848's reconciliation by
// hand: a second member's share reaches it only once the first no longer
// reports it; epochs, re-join in place, leave, and a member evicted after
// the store's session timeout (on an injected clock).
func TestConsumerGroupHeartbeatReconcile(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, srv := serveClock(t, clock)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}))
	d, err := s.DescribeTopic("orders")
	require.NoError(t, err)
	id := [16]byte(d.ID)
	c := dial(t, srv)

	a := c.cg(cgReq("billing", "A", 0, "orders"))
	require.Equal(t, int16(0), a.ErrorCode)
	require.Equal(t, "A", *a.MemberID)
	require.Equal(t, int32(5000), a.HeartbeatIntervalMillis)
	require.Equal(t, []int32{0, 1}, assigned(t, a, id))
	epochA := a.MemberEpoch
	require.Positive(t, epochA)
	firstEpochA := epochA

	// Nothing changed: no assignment in the response.
	a = c.cg(cgReq("billing", "A", epochA))
	require.Equal(t, int16(0), a.ErrorCode)
	require.Nil(t, a.Assignment)

	b := c.cg(cgReq("billing", "B", 0, "orders"))
	require.Equal(t, int16(0), b.ErrorCode)
	require.Empty(t, assigned(t, b, id), "A still holds B's share")
	epochB := b.MemberEpoch
	require.Greater(t, epochB, epochA)

	// A is to give up partition 1 and keeps its epoch until it has, as
	// Kafka's CurrentAssignmentBuilder keeps a member in
	// UNREVOKED_PARTITIONS: its commit of partition 1, at that epoch,
	// still counts.
	a = c.cg(cgReq("billing", "A", epochA))
	require.Equal(t, int16(0), a.ErrorCode)
	require.Equal(t, []int32{0}, assigned(t, a, id), "A is to give up partition 1")
	require.Equal(t, firstEpochA, a.MemberEpoch, "A's epoch while it holds partition 1")
	a = c.cg(cgReq("billing", "A", epochA))
	require.Equal(t, int16(0), a.ErrorCode)
	require.Equal(t, firstEpochA, a.MemberEpoch, "A's epoch while it holds partition 1")

	b = c.cg(cgReq("billing", "B", epochB))
	require.Nil(t, b.Assignment, "A has not reported it yet")

	// A's commit at its epoch goes in; at an old one it is stale, and
	// before v9 it is refused.
	commit := func(version int16, member string, epoch int32, part int32) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.SetVersion(version)
		req.Group, req.MemberID, req.Generation = "billing", member, epoch
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "orders"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = part, 0
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return c.roundTrip(req).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	require.Equal(t, int16(113), commit(9, "A", epochA-1, 1), "STALE_MEMBER_EPOCH")
	require.Equal(t, int16(35), commit(8, "A", epochA, 1), "UNSUPPORTED_VERSION")
	require.Equal(t, int16(0), commit(9, "A", epochA, 1))
	_, ok := s.Committed("billing", "orders", 1)
	require.True(t, ok)
	require.Equal(t, int16(113), commit(9, "B", epochB, 1), "B does not own partition 1 yet")

	// A reports partition 1 given back and moves on to the group's
	// epoch; its commits at the one before are stale.
	a = c.cg(owning(cgReq("billing", "A", epochA), id, 0))
	require.Equal(t, []int32{0}, assigned(t, a, id))
	require.Equal(t, epochB, a.MemberEpoch)
	epochA = a.MemberEpoch
	require.Equal(t, int16(113), commit(9, "A", firstEpochA, 0), "STALE_MEMBER_EPOCH")
	require.Equal(t, int16(0), commit(9, "A", epochA, 0))
	// A member that lost a response may send its previous epoch, with
	// partitions of its assignment only (Kafka's
	// throwIfMemberEpochIsInvalid); else it is fenced.
	require.Equal(t, int16(110), c.cg(owning(cgReq("billing", "A", firstEpochA), id, 0, 1)).ErrorCode, "FENCED_MEMBER_EPOCH")
	require.Equal(t, int16(110), c.cg(cgReq("billing", "A", firstEpochA)).ErrorCode, "FENCED_MEMBER_EPOCH without partitions")
	a = c.cg(owning(cgReq("billing", "A", firstEpochA), id, 0))
	require.Equal(t, int16(0), a.ErrorCode)
	require.Equal(t, epochA, a.MemberEpoch)
	b = c.cg(cgReq("billing", "B", epochB))
	require.Equal(t, []int32{1}, assigned(t, b, id), "B receives partition 1")

	// A wrong epoch is fenced; the previous one with partitions of the
	// assignment is not.
	require.Equal(t, int16(110), c.cg(cgReq("billing", "B", epochB+7)).ErrorCode, "FENCED_MEMBER_EPOCH")
	require.Equal(t, int16(25), c.cg(cgReq("billing", "C", 3)).ErrorCode, "UNKNOWN_MEMBER_ID")

	// Re-joining in place sends the assignment again.
	b = c.cg(cgReq("billing", "B", 0, "orders"))
	require.Equal(t, int16(0), b.ErrorCode)
	require.Equal(t, []int32{1}, assigned(t, b, id))
	require.Len(t, s.GroupMembers("billing"), 2)

	// B leaves; A is handed partition 1 at its next heartbeat.
	leave := c.cg(cgReq("billing", "B", -1))
	require.Equal(t, int16(0), leave.ErrorCode)
	require.Equal(t, int32(-1), leave.MemberEpoch)
	require.Equal(t, int16(25), c.cg(cgReq("billing", "B", b.MemberEpoch)).ErrorCode)
	a = c.cg(cgReq("billing", "A", epochA))
	require.Equal(t, []int32{0, 1}, assigned(t, a, id))

	// A stops heartbeating: after the store's session timeout (45 s) it
	// is evicted, and its heartbeat is UNKNOWN_MEMBER_ID.
	clock.advance(46 * time.Second)
	require.Empty(t, s.GroupMembers("billing"))
	require.Equal(t, int16(25), c.cg(cgReq("billing", "A", a.MemberEpoch)).ErrorCode)
}

// TestConsumerGroupHeartbeatErrors checks the codes of requests that
// break KIP-848's rules, of static members, of regex subscriptions and of
// a group used by Kafka's classic protocol.
func TestConsumerGroupHeartbeatErrors(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}))
	require.NoError(t, s.CreateTopic("order-lines", strata.TopicConfig{Partitions: 1}))
	c := dial(t, srv)
	str := func(s string) *string { return &s }

	for _, tt := range []struct {
		name string
		req  func() *kmsg.ConsumerGroupHeartbeatRequest
		code int16
	}{
		{"no group", func() *kmsg.ConsumerGroupHeartbeatRequest { return cgReq("", "A", 0, "orders") }, 24},
		{"no member id at v1", func() *kmsg.ConsumerGroupHeartbeatRequest { return cgReq("g", "", 0, "orders") }, 42},
		{"epoch below -2", func() *kmsg.ConsumerGroupHeartbeatRequest { return cgReq("g", "A", -3) }, 42},
		{"-2 without instance id", func() *kmsg.ConsumerGroupHeartbeatRequest { return cgReq("g", "A", -2) }, 42},
		{"empty instance id", func() *kmsg.ConsumerGroupHeartbeatRequest {
			r := cgReq("g", "A", 0, "orders")
			r.InstanceID = str("")
			return r
		}, 42},
		{"join without rebalance timeout", func() *kmsg.ConsumerGroupHeartbeatRequest {
			r := cgReq("g", "A", 0, "orders")
			r.RebalanceTimeoutMillis = -1
			return r
		}, 42},
		{"join owning partitions", func() *kmsg.ConsumerGroupHeartbeatRequest {
			return owning(cgReq("g", "A", 0, "orders"), [16]byte{1}, 0)
		}, 42},
		{"join without subscription", func() *kmsg.ConsumerGroupHeartbeatRequest {
			r := cgReq("g", "A", 0)
			r.SubscribedTopicNames = nil
			return r
		}, 42},
		{"unknown assignor", func() *kmsg.ConsumerGroupHeartbeatRequest {
			r := cgReq("g", "A", 0, "orders")
			r.ServerAssignor = str("cooperative-sticky")
			return r
		}, 112},
		{"bad regex", func() *kmsg.ConsumerGroupHeartbeatRequest {
			r := cgReq("g", "A", 0)
			r.SubscribedTopicNames, r.SubscribedTopicRegex = nil, str("order(")
			return r
		}, 128},
		{"unknown member", func() *kmsg.ConsumerGroupHeartbeatRequest { return cgReq("g", "A", 4) }, 25},
		{"unknown member leaving", func() *kmsg.ConsumerGroupHeartbeatRequest { return cgReq("g", "A", -1) }, 25},
	} {
		resp := c.cg(tt.req())
		require.Equal(t, tt.code, resp.ErrorCode, tt.name)
	}
	require.Empty(t, s.GroupMembers("g"), "no request above joined")

	// A regex matches topic names whole, internal topics never.
	r := cgReq("lines", "A", 0)
	r.SubscribedTopicNames, r.SubscribedTopicRegex = nil, str("order-.*|__consumer_offsets")
	resp := c.cg(r)
	require.Equal(t, int16(0), resp.ErrorCode)
	members := s.GroupMembers("lines")
	require.Len(t, members, 1)
	require.Equal(t, []string{"order-lines"}, members[0].Topics)

	// Static members: an instance id in use is UNRELEASED_INSTANCE_ID to
	// a new member, FENCED_INSTANCE_ID to another one; after a leave
	// with -2 it is free.
	r = cgReq("static", "A", 0, "orders")
	r.InstanceID = str("host-1")
	require.Equal(t, int16(0), c.cg(r).ErrorCode)
	r = cgReq("static", "B", 0, "orders")
	r.InstanceID = str("host-1")
	require.Equal(t, int16(111), c.cg(r).ErrorCode)
	r = cgReq("static", "A", -2)
	r.InstanceID = str("host-1")
	leave := c.cg(r)
	require.Equal(t, int16(0), leave.ErrorCode)
	require.Equal(t, int32(-2), leave.MemberEpoch)
	r = cgReq("static", "B", 0, "orders")
	r.InstanceID = str("host-1")
	require.Equal(t, int16(0), c.cg(r).ErrorCode)

	// A classic group is not a consumer group: GROUP_ID_NOT_FOUND; a
	// classic JoinGroup for a consumer group is
	// INCONSISTENT_GROUP_PROTOCOL.
	release, err := s.ClaimGroup("classic")
	require.NoError(t, err)
	require.Equal(t, int16(69), c.cg(cgReq("classic", "A", 0, "orders")).ErrorCode)
	release()
	require.Equal(t, int16(23), c.join(joinReq(5, "static", "", nil, "range")).ErrorCode)
}

// TestConsumerGroupHeartbeatV0 checks v0, where the broker names the
// member.
func TestConsumerGroupHeartbeatV0(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 1}))
	c := dial(t, srv)
	req := cgReq("g", "", 0, "orders")
	req.SetVersion(0)
	resp := c.cg(req)
	require.Equal(t, int16(0), resp.ErrorCode)
	require.NotEmpty(t, *resp.MemberID)
	req = cgReq("g", *resp.MemberID, resp.MemberEpoch)
	req.SetVersion(0)
	require.Equal(t, int16(0), c.cg(req).ErrorCode)
}

// TestCloseLeavesConsumerGroups: Server.Close takes its wire members out
// of the store's groups, so that the partitions are free at once.
func TestCloseLeavesConsumerGroups(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 1}))
	srv, err := broker.Start(s, &broker.Options{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	c := dial(t, srv)
	require.Equal(t, int16(0), c.cg(cgReq("g", "A", 0, "orders")).ErrorCode)
	require.Len(t, s.GroupMembers("g"), 1)
	require.NoError(t, srv.Close())
	require.Empty(t, s.GroupMembers("g"))
}

// TestConsumerGroupTxnOffsetCommit: a KIP-848 member's offsets go into a
// transaction at its member epoch (STALE_MEMBER_EPOCH at another), and
// are the group's once it commits.
func TestConsumerGroupTxnOffsetCommit(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 1}))
	_, err := s.AppendTo(t.Context(), "orders", 0, strata.Record{Value: []byte("v")})
	require.NoError(t, err)
	c := dial(t, srv)
	a := c.cg(cgReq("billing", "A", 0, "orders"))
	require.Equal(t, int16(0), a.ErrorCode)

	w := newWireTxn(t, c, "tx")
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.SetVersion(3)
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = w.id, w.pid, w.epoch, "billing"
	require.Equal(t, int16(0), c.roundTrip(add).(*kmsg.AddOffsetsToTxnResponse).ErrorCode)
	commit := func(epoch int32) int16 {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.SetVersion(3)
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = w.id, "billing", w.pid, w.epoch
		req.MemberID, req.Generation = "A", epoch
		return c.txnOffsetCommit(req, "orders", 1)
	}
	require.Equal(t, int16(113), commit(a.MemberEpoch+1), "STALE_MEMBER_EPOCH")
	require.Equal(t, int16(0), commit(a.MemberEpoch))
	require.Equal(t, int16(0), w.end(true))
	om, ok := s.Committed("billing", "orders", 0)
	require.True(t, ok)
	require.Equal(t, int64(1), om.Offset)
}

// TestConsumerGroupOffsetFetch: OffsetFetch v9 by a KIP-848 member is
// checked at its member epoch; an admin's (no member) is not.
func TestConsumerGroupOffsetFetch(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 1}))
	c := dial(t, srv)
	a := c.cg(cgReq("billing", "A", 0, "orders"))
	require.Equal(t, int16(0), a.ErrorCode)
	fetch := func(member *string, epoch int32) int16 {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.SetVersion(9)
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group, rg.MemberID, rg.MemberEpoch = "billing", member, epoch
		req.Groups = append(req.Groups, rg)
		return c.roundTrip(req).(*kmsg.OffsetFetchResponse).Groups[0].ErrorCode
	}
	member, stranger := "A", "B"
	require.Equal(t, int16(0), fetch(&member, a.MemberEpoch))
	require.Equal(t, int16(113), fetch(&member, a.MemberEpoch+1), "STALE_MEMBER_EPOCH")
	require.Equal(t, int16(25), fetch(&stranger, 1), "UNKNOWN_MEMBER_ID")
	require.Equal(t, int16(0), fetch(nil, -1), "an admin's")
}
