package broker_test

import (
	"context"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// joinReq is a JoinGroup of a consumer at version.
func joinReq(version int16, group, member string, instance *string, protocols ...string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.SetVersion(version)
	req.Group, req.MemberID, req.InstanceID = group, member, instance
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 30000, 30000
	req.ProtocolType = "consumer"
	for _, name := range protocols {
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = name, []byte("metadata of "+name)
		req.Protocols = append(req.Protocols, p)
	}
	return req
}

func syncReq(group, member string, generation int32, assignments map[string]string) *kmsg.SyncGroupRequest {
	req := kmsg.NewPtrSyncGroupRequest()
	req.SetVersion(5)
	req.Group, req.MemberID, req.Generation = group, member, generation
	for m, a := range assignments {
		ga := kmsg.NewSyncGroupRequestGroupAssignment()
		ga.MemberID, ga.MemberAssignment = m, []byte(a)
		req.GroupAssignment = append(req.GroupAssignment, ga)
	}
	return req
}

func heartbeatReq(group, member string, generation int32) *kmsg.HeartbeatRequest {
	req := kmsg.NewPtrHeartbeatRequest()
	req.SetVersion(4)
	req.Group, req.MemberID, req.Generation = group, member, generation
	return req
}

func (c *rawClient) join(req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	c.t.Helper()
	return c.roundTrip(req).(*kmsg.JoinGroupResponse)
}

func (c *rawClient) sync(req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	c.t.Helper()
	return c.roundTrip(req).(*kmsg.SyncGroupResponse)
}

func (c *rawClient) heartbeat(group, member string, generation int32) int16 {
	c.t.Helper()
	return c.roundTrip(heartbeatReq(group, member, generation)).(*kmsg.HeartbeatResponse).ErrorCode
}

func (c *rawClient) commit(group, member string, generation int32, offset int64) int16 {
	c.t.Helper()
	return c.roundTrip(commitReq(group, member, generation, "events", offset, "")).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
}

// TestGroupProtocolErrors walks a group through the classic protocol by
// hand and checks Kafka's error codes on the way: bad join requests,
// MEMBER_ID_REQUIRED, the leader's assignment handed out by SyncGroup,
// REBALANCE_IN_PROGRESS to a member's heartbeat and commit while another
// joins, ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID for stale or unknown
// members, the protocol every member supports, INCONSISTENT_GROUP_PROTOCOL
// for a member that shares none, and a batch LeaveGroup.
func TestGroupProtocolErrors(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	_, err := s.AppendTo(context.Background(), "events", 0, strata.Record{Value: []byte("a")})
	require.NoError(t, err)
	a, b := dial(t, srv), dial(t, srv)

	for _, tt := range []struct {
		name string
		req  *kmsg.JoinGroupRequest
		code int16
	}{
		{"no group", joinReq(5, "", "", nil, "range"), 24},
		{"no protocols", joinReq(5, "g", "", nil), 23},
		{"session too short", func() *kmsg.JoinGroupRequest {
			r := joinReq(5, "g", "", nil, "range")
			r.SessionTimeoutMillis = 1000
			return r
		}(), 26},
		{"unknown member", joinReq(5, "g", "who", nil, "range"), 25},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.code, a.join(tt.req).ErrorCode)
		})
	}

	first := a.join(joinReq(5, "g", "", nil, "range", "roundrobin"))
	require.Equal(t, int16(79), first.ErrorCode, "MEMBER_ID_REQUIRED")
	require.NotEmpty(t, first.MemberID)
	ma := first.MemberID
	resp := a.join(joinReq(5, "g", ma, nil, "range", "roundrobin"))
	require.Equal(t, int16(0), resp.ErrorCode)
	require.Equal(t, int32(1), resp.Generation)
	require.Equal(t, ma, resp.LeaderID)
	require.Equal(t, "range", *resp.Protocol)
	require.Len(t, resp.Members, 1)
	require.Equal(t, []byte("metadata of range"), resp.Members[0].ProtocolMetadata)

	require.Equal(t, int16(27), a.commit("g", ma, 1, 1), "REBALANCE_IN_PROGRESS before the SyncGroup")
	require.Equal(t, int16(22), a.sync(syncReq("g", ma, 2, nil)).ErrorCode, "ILLEGAL_GENERATION")
	require.Equal(t, int16(25), a.sync(syncReq("g", "who", 1, nil)).ErrorCode, "UNKNOWN_MEMBER_ID")
	sr := a.sync(syncReq("g", ma, 1, map[string]string{ma: "all of it"}))
	require.Equal(t, int16(0), sr.ErrorCode)
	require.Equal(t, []byte("all of it"), sr.MemberAssignment)

	require.Equal(t, int16(0), a.heartbeat("g", ma, 1))
	require.Equal(t, int16(22), a.heartbeat("g", ma, 0))
	require.Equal(t, int16(25), a.heartbeat("g", "who", 1))
	require.Equal(t, int16(25), a.heartbeat("nope", ma, 1))
	require.Equal(t, int16(0), a.commit("g", ma, 1, 1))
	require.Equal(t, int16(22), a.commit("g", ma, 2, 1))
	require.Equal(t, int16(25), a.commit("g", "who", 1, 1))
	require.Equal(t, int16(25), a.commit("g", "", -1, 1), "a standalone commit to a group with members")
	om, ok := s.Committed("g", "events", 0)
	require.True(t, ok)
	require.Equal(t, int64(1), om.Offset)

	// A member that supports none of the group's protocols.
	require.Equal(t, int16(23), b.join(joinReq(3, "g", "", nil, "sticky")).ErrorCode)
	other := joinReq(3, "g", "", nil, "range")
	other.ProtocolType = "connect"
	require.Equal(t, int16(23), b.join(other).ErrorCode)

	// A second member joins (v3: no MEMBER_ID_REQUIRED); its JoinGroup
	// waits for the first to join again.
	joined := b.async(joinReq(3, "g", "", nil, "roundrobin", "range"))
	deadline := time.Now().Add(time.Minute)
	for a.heartbeat("g", ma, 1) != 27 {
		require.True(t, time.Now().Before(deadline), "REBALANCE_IN_PROGRESS")
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, int16(0), a.commit("g", ma, 1, 1), "a commit of the generation still going is accepted, as Kafka does")
	select {
	case <-joined:
		t.Fatal("the second member's JoinGroup did not wait for the first member")
	default:
	}
	resp = a.join(joinReq(5, "g", ma, nil, "range", "roundrobin"))
	require.Equal(t, int16(0), resp.ErrorCode)
	require.Equal(t, int32(2), resp.Generation)
	require.Equal(t, ma, resp.LeaderID, "the leader stays")
	require.Equal(t, "range", *resp.Protocol, "both support range and roundrobin; each has one vote and the leader's preference wins")
	require.Len(t, resp.Members, 2)
	jb, _ := (<-joined).(*kmsg.JoinGroupResponse)
	require.NotNil(t, jb)
	require.Equal(t, int16(0), jb.ErrorCode)
	require.Equal(t, int32(2), jb.Generation)
	require.Empty(t, jb.Members, "only the leader gets the members")
	mb := jb.MemberID

	require.Equal(t, int16(22), a.commit("g", ma, 1, 1), "the old generation")
	synced := b.async(syncReq("g", mb, 2, nil))
	sr = a.sync(syncReq("g", ma, 2, map[string]string{ma: "half", mb: "the other half"}))
	require.Equal(t, []byte("half"), sr.MemberAssignment)
	sb, _ := (<-synced).(*kmsg.SyncGroupResponse)
	require.NotNil(t, sb)
	require.Equal(t, int16(0), sb.ErrorCode)
	require.Equal(t, []byte("the other half"), sb.MemberAssignment, "the follower's SyncGroup waited for the leader's")
	require.Equal(t, int16(0), b.commit("g", mb, 2, 1))

	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.SetVersion(5)
	leave.Group = "g"
	for _, id := range []string{mb, "who"} {
		m := kmsg.NewLeaveGroupRequestMember()
		m.MemberID = id
		leave.Members = append(leave.Members, m)
	}
	lr := b.roundTrip(leave).(*kmsg.LeaveGroupResponse)
	require.Equal(t, int16(0), lr.ErrorCode)
	require.Equal(t, int16(0), lr.Members[0].ErrorCode)
	require.Equal(t, int16(25), lr.Members[1].ErrorCode)
	require.Equal(t, int16(25), b.heartbeat("g", mb, 2), "the member left")
	require.Equal(t, int16(27), a.heartbeat("g", ma, 2))
	resp = a.join(joinReq(5, "g", ma, nil, "range"))
	require.Equal(t, int16(0), resp.ErrorCode)
	require.Equal(t, int32(3), resp.Generation)
	require.Len(t, resp.Members, 1)
}

// async sends req and returns a channel that gets its response (nil if
// it does not come).
func (c *rawClient) async(req kmsg.Request) <-chan kmsg.Response {
	corr := c.send(req)
	out := make(chan kmsg.Response, 1)
	go func() {
		resp := req.ResponseKind()
		var size [4]byte
		if _, err := io.ReadFull(c.nc, size[:]); err != nil {
			out <- nil
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(c.nc, body); err != nil || int32(binary.BigEndian.Uint32(body)) != corr {
			out <- nil
			return
		}
		body = body[4:]
		if resp.IsFlexible() {
			body = body[1:]
		}
		if resp.ReadFrom(body) != nil {
			resp = nil
		}
		out <- resp
	}()
	return out
}

// TestGroupStaticMembers checks static membership (KIP-345): a member
// with a group.instance.id joins without MEMBER_ID_REQUIRED; the same
// instance joining again takes its place under a new member id, without
// a rebalance for a follower, and the old id is FENCED_INSTANCE_ID; it
// leaves by instance id.
func TestGroupStaticMembers(t *testing.T) {
	_, srv := serve(t, nil)
	a, b := dial(t, srv), dial(t, srv)
	la, lb := "instance-a", "instance-b"
	ra := a.join(joinReq(5, "g", "", &la, "range"))
	require.Equal(t, int16(0), ra.ErrorCode, "a static member joins at once")
	ma := ra.MemberID
	joined := b.async(joinReq(5, "g", "", &lb, "range"))
	deadline := time.Now().Add(time.Minute)
	for a.heartbeat("g", ma, 1) != 27 {
		require.True(t, time.Now().Before(deadline), "REBALANCE_IN_PROGRESS")
		time.Sleep(time.Millisecond)
	}
	ra = a.join(joinReq(5, "g", ma, &la, "range"))
	require.Equal(t, int32(2), ra.Generation)
	rb, _ := (<-joined).(*kmsg.JoinGroupResponse)
	require.NotNil(t, rb)
	mb := rb.MemberID
	synced := b.async(syncReq("g", mb, 2, nil))
	a.sync(syncReq("g", ma, 2, map[string]string{ma: "a's", mb: "b's"}))
	<-synced

	// b restarts: the same instance id, no member id.
	c := dial(t, srv)
	rc := c.join(joinReq(5, "g", "", &lb, "range"))
	require.Equal(t, int16(0), rc.ErrorCode)
	require.NotEqual(t, mb, rc.MemberID)
	require.Equal(t, int32(2), rc.Generation, "no rebalance")
	sc := c.sync(syncReq("g", rc.MemberID, 2, nil))
	require.Equal(t, []byte("b's"), sc.MemberAssignment, "the instance keeps its assignment")
	require.Equal(t, int16(0), a.heartbeat("g", ma, 2), "the group stays stable")

	hb := heartbeatReq("g", mb, 2)
	hb.InstanceID = &lb
	require.Equal(t, int16(82), b.roundTrip(hb).(*kmsg.HeartbeatResponse).ErrorCode, "FENCED_INSTANCE_ID")
	require.Equal(t, int16(82), b.join(joinReq(5, "g", mb, &lb, "range")).ErrorCode)

	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.SetVersion(3)
	leave.Group = "g"
	m := kmsg.NewLeaveGroupRequestMember()
	m.InstanceID = &lb
	leave.Members = append(leave.Members, m)
	lr := c.roundTrip(leave).(*kmsg.LeaveGroupResponse)
	require.Equal(t, int16(0), lr.Members[0].ErrorCode)
	require.Equal(t, int16(27), a.heartbeat("g", ma, 2), "the group rebalances without it")
}

// TestGroupInProcessAndWire checks a group used both ways: a group with
// consumers in the process refuses wire members with
// INCONSISTENT_GROUP_PROTOCOL (kgo's PollFetches returns it), its
// offsets stay its own (a wire commit is
// UNKNOWN_MEMBER_ID, DeleteGroups NON_EMPTY_GROUP); a group with wire
// members refuses Store.Consumer with ErrGroupClaimed; once the wire
// members leave, the group is the store's again.
func TestGroupInProcessAndWire(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	_, err := s.AppendTo(context.Background(), "events", 0, strata.Record{Value: []byte("a")})
	require.NoError(t, err)
	a := dial(t, srv)

	local, err := s.Consumer("local", []string{"events"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	require.Equal(t, int16(23), a.join(joinReq(5, "local", "", nil, "range")).ErrorCode)
	require.Equal(t, int16(23), a.join(joinReq(3, "local", "", nil, "range")).ErrorCode)
	require.Equal(t, int16(25), a.commit("local", "", -1, 1))
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.SetVersion(2)
	del.Groups = []string{"local"}
	require.Equal(t, int16(68), a.roundTrip(del).(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode)
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.ConsumerGroup("local"), kgo.ConsumeTopics("events"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fs := cl.PollFetches(ctx)
	require.NotEmpty(t, fs.Errors())
	require.ErrorIs(t, fs.Errors()[0].Err, kerr.InconsistentGroupProtocol, "what kgo shows")
	cl.Close()
	require.NoError(t, local.Close())

	r := a.join(joinReq(3, "local", "", nil, "range"))
	require.Equal(t, int16(0), r.ErrorCode, "the group is free once its consumers closed")
	_, err = s.Consumer("local", []string{"events"}, strata.ConsumerOptions{})
	require.ErrorIs(t, err, strata.ErrGroupClaimed)
	_, err = s.ResetOffsets("local", "events", strata.ToEarliest, false)
	require.ErrorIs(t, err, strata.ErrGroupClaimed)

	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.SetVersion(1)
	leave.Group, leave.MemberID = "local", r.MemberID
	require.Equal(t, int16(0), a.roundTrip(leave).(*kmsg.LeaveGroupResponse).ErrorCode)
	local, err = s.Consumer("local", []string{"events"}, strata.ConsumerOptions{})
	require.NoError(t, err, "the group is the store's again")
	require.NoError(t, local.Close())
}

// TestGroupCloseEndsJoin checks that Server.Close ends a JoinGroup that
// waits for a rebalance.
func TestGroupCloseEndsJoin(t *testing.T) {
	_, srv := serve(t, nil)
	a, b := dial(t, srv), dial(t, srv)
	require.Equal(t, int16(0), a.join(joinReq(3, "g", "", nil, "range")).ErrorCode)
	waiting := b.async(joinReq(3, "g", "", nil, "range"))
	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("Close did not end the waiting JoinGroup")
	}
	require.Nil(t, <-waiting, "the connection closed without a response")
}

// TestGroupCloseReleases checks that Server.Close gives the store its
// groups back: a group whose wire members were cut off takes the store's
// consumers at once, without waiting for their session timeouts.
func TestGroupCloseReleases(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	a := dial(t, srv)
	require.Equal(t, int16(0), a.join(joinReq(3, "g", "", nil, "range")).ErrorCode)
	_, err := s.Consumer("g", []string{"events"}, strata.ConsumerOptions{})
	require.ErrorIs(t, err, strata.ErrGroupClaimed)
	require.NoError(t, srv.Close())
	c, err := s.Consumer("g", []string{"events"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

// TestOffsetFetchGroups checks OffsetFetch v8, which asks for several
// groups at once (KIP-709): each group's offsets, or all of them for a
// null topic list, and INVALID_GROUP_ID for an empty group id.
func TestOffsetFetchGroups(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 2}))
	for p := range 2 {
		_, err := s.AppendTo(context.Background(), "events", p, strata.Record{Value: []byte("a")}, strata.Record{Value: []byte("b")})
		require.NoError(t, err)
	}
	require.NoError(t, s.Commit("a", "events", 0, 1, "a's"))
	require.NoError(t, s.Commit("b", "events", 1, 2, "b's"))
	req := kmsg.NewPtrOffsetFetchRequest()
	req.SetVersion(8)
	ga := kmsg.NewOffsetFetchRequestGroup()
	ga.Group = "a"
	gt := kmsg.NewOffsetFetchRequestGroupTopic()
	gt.Topic, gt.Partitions = "events", []int32{0, 1}
	ga.Topics = append(ga.Topics, gt)
	gb := kmsg.NewOffsetFetchRequestGroup()
	gb.Group = "b" // null topics: all
	gc := kmsg.NewOffsetFetchRequestGroup()
	req.Groups = append(req.Groups, ga, gb, gc)
	resp := dial(t, srv).roundTrip(req).(*kmsg.OffsetFetchResponse)
	require.Len(t, resp.Groups, 3)
	a := resp.Groups[0]
	require.Equal(t, "a", a.Group)
	require.Equal(t, int16(0), a.ErrorCode)
	require.Len(t, a.Topics[0].Partitions, 2)
	require.Equal(t, int64(1), a.Topics[0].Partitions[0].Offset)
	require.Equal(t, "a's", *a.Topics[0].Partitions[0].Metadata)
	require.Equal(t, int64(-1), a.Topics[0].Partitions[1].Offset, "no commit")
	b := resp.Groups[1]
	require.Len(t, b.Topics, 1)
	require.Len(t, b.Topics[0].Partitions, 1, "only what b committed")
	require.Equal(t, int32(1), b.Topics[0].Partitions[0].Partition)
	require.Equal(t, int64(2), b.Topics[0].Partitions[0].Offset)
	require.Equal(t, int16(24), resp.Groups[2].ErrorCode)
}

// TestListGroupsFilters checks ListGroups' states filter (v4+,
// case-insensitive) and types filter (v5+: every group is classic).
func TestListGroupsFilters(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	_, err := s.AppendTo(context.Background(), "events", 0, strata.Record{Value: []byte("a")})
	require.NoError(t, err)
	require.NoError(t, s.Commit("idle", "events", 0, 1, ""))
	c := dial(t, srv)
	require.Equal(t, int16(0), c.join(joinReq(3, "busy", "", nil, "range")).ErrorCode)
	list := func(states, types []string) map[string]string {
		req := kmsg.NewPtrListGroupsRequest()
		req.SetVersion(5)
		req.StatesFilter, req.TypesFilter = states, types
		resp := c.roundTrip(req).(*kmsg.ListGroupsResponse)
		require.Equal(t, int16(0), resp.ErrorCode)
		out := map[string]string{}
		for _, g := range resp.Groups {
			require.Equal(t, "classic", g.GroupType)
			out[g.Group] = g.GroupState
		}
		return out
	}
	require.Equal(t, map[string]string{"idle": "Empty", "busy": "CompletingRebalance"}, list(nil, nil))
	require.Equal(t, map[string]string{"idle": "Empty"}, list([]string{"empty"}, nil))
	require.Equal(t, map[string]string{"busy": "CompletingRebalance"}, list([]string{"Stable", "CompletingRebalance"}, []string{"Classic"}))
	require.Empty(t, list(nil, []string{"consumer"}))
}
