package broker

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// groupCall calls the group handlers directly, as a connection would.
type groupCall struct {
	t   *testing.T
	srv *Server
}

// join sends a JoinGroup (v3, or v4 with MEMBER_ID_REQUIRED) in the
// background and returns where its response comes.
func (c groupCall) join(version int16, member string, session, rebalance time.Duration) <-chan *kmsg.JoinGroupResponse {
	req := kmsg.NewPtrJoinGroupRequest()
	req.SetVersion(version)
	req.Group, req.MemberID, req.ProtocolType = "g", member, "consumer"
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = int32(session/time.Millisecond), int32(rebalance/time.Millisecond)
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name = "range"
	req.Protocols = append(req.Protocols, p)
	out := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		resp, err := handleJoinGroup(c.srv, header{clientID: "c"}, req)
		if err != nil {
			out <- nil
			return
		}
		out <- resp.(*kmsg.JoinGroupResponse)
	}()
	return out
}

func (c groupCall) sync(member string, generation int32, assign ...string) <-chan *kmsg.SyncGroupResponse {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.MemberID, req.Generation = "g", member, generation
	for _, m := range assign {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = m, []byte("for "+m)
		req.GroupAssignment = append(req.GroupAssignment, a)
	}
	out := make(chan *kmsg.SyncGroupResponse, 1)
	go func() {
		resp, err := handleSyncGroup(c.srv, header{}, req)
		if err != nil {
			out <- nil
			return
		}
		out <- resp.(*kmsg.SyncGroupResponse)
	}()
	return out
}

func (c groupCall) heartbeat(member string, generation int32) int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.MemberID, req.Generation = "g", member, generation
	resp, err := handleHeartbeat(c.srv, header{}, req)
	require.NoError(c.t, err)
	return resp.(*kmsg.HeartbeatResponse).ErrorCode
}

// stable makes a group of one member and returns its id.
func (c groupCall) stable(session, rebalance time.Duration) string {
	j := <-c.join(3, "", session, rebalance)
	require.Equal(c.t, int16(0), j.ErrorCode)
	s := <-c.sync(j.MemberID, j.Generation, j.MemberID)
	require.Equal(c.t, int16(0), s.ErrorCode)
	return j.MemberID
}

// withGroups runs f in a synctest bubble with a Server of s, whose
// timers run on the bubble's clock.
func withGroups(t *testing.T, f func(c groupCall, s *strata.Store)) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.EnsureOffsetsTopic()) // groups record their membership there: created outside the bubble
	synctest.Test(t, func(t *testing.T) {
		srv, err := New(s, nil)
		require.NoError(t, err)
		defer srv.Close()
		f(groupCall{t: t, srv: srv}, s)
	})
}

// TestGroupSessionTimeout checks that a member that sends no heartbeat
// for its session timeout is evicted, and that the group, empty, is the
// store's again; heartbeats keep a member.
func TestGroupSessionTimeout(t *testing.T) {
	withGroups(t, func(c groupCall, s *strata.Store) {
		m := c.stable(10*time.Second, time.Minute)
		for range 3 {
			time.Sleep(9 * time.Second)
			require.Equal(t, int16(0), c.heartbeat(m, 1))
		}
		time.Sleep(10*time.Second + time.Millisecond)
		require.Equal(t, int16(25), c.heartbeat(m, 1), "evicted")
		cons, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{})
		require.NoError(t, err, "the claim is released")
		require.NoError(t, cons.Close())
	})
}

// TestGroupRebalanceTimeout checks that a rebalance completes after the
// rebalance timeout without the members that did not join again, even
// though they heartbeat.
func TestGroupRebalanceTimeout(t *testing.T) {
	withGroups(t, func(c groupCall, _ *strata.Store) {
		a := c.stable(10*time.Second, 30*time.Second)
		joined := c.join(3, "", 10*time.Second, 30*time.Second)
		for range 5 {
			time.Sleep(5 * time.Second)
			require.Equal(t, int16(27), c.heartbeat(a, 1))
		}
		time.Sleep(5*time.Second - time.Millisecond)
		synctest.Wait()
		select {
		case <-joined:
			t.Fatal("the join completed before the rebalance timeout")
		default:
		}
		time.Sleep(2 * time.Millisecond)
		j := <-joined
		require.Equal(t, int16(0), j.ErrorCode)
		require.Equal(t, int32(2), j.Generation)
		require.Equal(t, j.MemberID, j.LeaderID)
		require.Len(t, j.Members, 1, "the member that did not join is out")
		require.Equal(t, int16(25), c.heartbeat(a, 1))
	})
}

// TestGroupLeaderNeverSyncs checks that a follower waiting for the
// leader's SyncGroup is told REBALANCE_IN_PROGRESS once the silent
// leader's session times out, and that a member id handed out with
// MEMBER_ID_REQUIRED is forgotten after the session timeout.
func TestGroupLeaderNeverSyncs(t *testing.T) {
	withGroups(t, func(c groupCall, _ *strata.Store) {
		a := c.stable(10*time.Second, 30*time.Second)
		joinedB := c.join(3, "", 10*time.Second, 30*time.Second)
		synctest.Wait()
		ja := <-c.join(3, a, 10*time.Second, 30*time.Second)
		require.Equal(t, int16(0), ja.ErrorCode)
		jb := <-joinedB
		require.Equal(t, a, jb.LeaderID)
		synced := c.sync(jb.MemberID, jb.Generation)
		time.Sleep(10*time.Second + time.Millisecond)
		sb := <-synced
		require.Equal(t, int16(27), sb.ErrorCode)

		required := <-c.join(4, "", 10*time.Second, 30*time.Second)
		require.Equal(t, int16(79), required.ErrorCode)
		time.Sleep(10*time.Second + time.Millisecond)
		late := <-c.join(4, required.MemberID, 10*time.Second, 30*time.Second)
		require.Equal(t, int16(25), late.ErrorCode, "the member id was forgotten")
	})
}

// TestGroupMaxSize checks that a group takes no more members, nor member
// ids to join with, than maxGroupSize: GROUP_MAX_SIZE_REACHED; a member
// id handed out still joins.
func TestGroupMaxSize(t *testing.T) {
	defer func(n int) { maxGroupSize = n }(maxGroupSize)
	maxGroupSize = 2
	withGroups(t, func(c groupCall, _ *strata.Store) {
		first := <-c.join(4, "", 10*time.Second, 30*time.Second)
		require.Equal(t, int16(79), first.ErrorCode)
		require.Equal(t, int16(79), (<-c.join(4, "", 10*time.Second, 30*time.Second)).ErrorCode)
		require.Equal(t, int16(81), (<-c.join(4, "", 10*time.Second, 30*time.Second)).ErrorCode)
		require.Equal(t, int16(81), (<-c.join(3, "", 10*time.Second, 30*time.Second)).ErrorCode)
		joined := c.join(4, first.MemberID, 10*time.Second, 30*time.Second)
		time.Sleep(10*time.Second + time.Millisecond) // the other id is forgotten; the join completes
		require.Equal(t, int16(0), (<-joined).ErrorCode)
	})
}

// TestGroupPendingOutlivesMembers checks that a group whose last member
// left during a rebalance, with a member id handed out still to join, is
// forgotten when that id is: nothing is left of it for ListGroups.
func TestGroupPendingOutlivesMembers(t *testing.T) {
	withGroups(t, func(c groupCall, _ *strata.Store) {
		a := c.stable(10*time.Second, time.Minute)
		required := <-c.join(4, "", 10*time.Second, time.Minute)
		require.Equal(t, int16(79), required.ErrorCode)
		rejoined := c.join(3, a, 10*time.Second, time.Minute)
		synctest.Wait()
		leave := kmsg.NewPtrLeaveGroupRequest()
		leave.Group, leave.MemberID = "g", a
		resp, err := handleLeaveGroup(c.srv, header{}, leave)
		require.NoError(t, err)
		require.Equal(t, int16(0), resp.(*kmsg.LeaveGroupResponse).ErrorCode)
		require.Equal(t, int16(25), (<-rejoined).ErrorCode)
		time.Sleep(10*time.Second + time.Millisecond) // the member id handed out is forgotten
		c.srv.groups.mu.Lock()
		g := c.srv.groups.groupLocked("g")
		c.srv.groups.mu.Unlock()
		require.Nil(t, g, "the group, empty, is forgotten")
	})
}
