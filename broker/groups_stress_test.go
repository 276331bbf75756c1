package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// stressMember runs one member's rounds in group: JoinGroup (v4, with
// MEMBER_ID_REQUIRED), SyncGroup (the leader assigning every member),
// Heartbeat, OffsetCommit's member check and LeaveGroup, whatever each answers; it
// stops at the server's close.
func stressMember(srv *Server, group string, rounds int) {
	for r := range rounds {
		join := kmsg.NewPtrJoinGroupRequest()
		join.SetVersion(4)
		join.Group, join.ProtocolType = group, "consumer"
		join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 10000, 20000
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", []byte{byte(r)}
		join.Protocols = append(join.Protocols, p)
		resp, err := handleJoinGroup(srv, header{clientID: "c"}, join)
		if err != nil {
			return
		}
		j := resp.(*kmsg.JoinGroupResponse)
		if j.ErrorCode != errMemberIDRequired {
			continue
		}
		join.MemberID = j.MemberID
		if resp, err = handleJoinGroup(srv, header{clientID: "c"}, join); err != nil {
			return
		}
		j = resp.(*kmsg.JoinGroupResponse)
		if j.ErrorCode == errNone {
			sync := kmsg.NewPtrSyncGroupRequest()
			sync.Group, sync.MemberID, sync.Generation = group, j.MemberID, j.Generation
			for _, m := range j.Members {
				a := kmsg.NewSyncGroupRequestGroupAssignment()
				a.MemberID, a.MemberAssignment = m.MemberID, []byte(m.MemberID)
				sync.GroupAssignment = append(sync.GroupAssignment, a)
			}
			if _, err := handleSyncGroup(srv, header{}, sync); err != nil {
				return
			}
			hb := kmsg.NewPtrHeartbeatRequest()
			hb.Group, hb.MemberID, hb.Generation = group, j.MemberID, j.Generation
			_, _ = handleHeartbeat(srv, header{}, hb)
			// OffsetCommit's check (the store's commit does I/O the
			// bubble cannot wait for).
			srv.memberCode(group, j.MemberID, j.Generation)
		}
		leave := kmsg.NewPtrLeaveGroupRequest()
		leave.Group, leave.MemberID = group, j.MemberID
		_, _ = handleLeaveGroup(srv, header{}, leave)
	}
}

// TestGroupStress runs members joining, syncing, committing and leaving
// two groups at once, with DeleteGroups of both racing them and a member
// of each group that joins and is never heard from again; once every
// member has left (the silent ones evicted after their session timeout),
// the server holds no group and the store's consumers may use both
// groups. A second crowd is cut off by Server.Close, which returns, and
// the groups are the store's again. The bubble's clock runs the
// timeouts; a deadlock fails the test.
func TestGroupStress(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	require.NoError(t, s.EnsureOffsetsTopic()) // groups record their membership there: created outside the bubble
	_, err = s.AppendTo(context.Background(), "events", 0, strata.Record{Value: []byte("a")})
	require.NoError(t, err)
	groups := []string{"g0", "g1"}
	crowd := func(srv *Server, stop <-chan struct{}) *sync.WaitGroup {
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Go(func() { stressMember(srv, groups[i%2], 25) })
		}
		for _, g := range groups {
			// A member that joins once and is heard from no more.
			wg.Go(func() {
				join := kmsg.NewPtrJoinGroupRequest()
				join.SetVersion(3)
				join.Group, join.ProtocolType = g, "consumer"
				join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 10000, 20000
				p := kmsg.NewJoinGroupRequestProtocol()
				p.Name = "range"
				join.Protocols = append(join.Protocols, p)
				_, _ = handleJoinGroup(srv, header{clientID: "silent"}, join)
			})
		}
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
				req := kmsg.NewPtrDeleteGroupsRequest()
				req.Groups = groups
				_, _ = handleDeleteGroups(srv, header{}, req)
			}
		})
		return &wg
	}
	consume := func(t *testing.T) {
		for _, g := range groups {
			c, err := s.Consumer(g, []string{"events"}, strata.ConsumerOptions{})
			require.NoError(t, err, "group %s", g)
			require.NoError(t, c.Close())
		}
	}
	synctest.Test(t, func(t *testing.T) {
		srv, err := New(s, nil)
		require.NoError(t, err)
		stop := make(chan struct{})
		wg := crowd(srv, stop)
		time.Sleep(time.Minute) // the silent members evicted
		close(stop)
		wg.Wait()
		srv.groups.mu.Lock()
		left := len(srv.groups.mu.m)
		srv.groups.mu.Unlock()
		require.Zero(t, left, "every group forgotten")
		require.Zero(t, wireMembers(srv))
		consume(t)

		stop = make(chan struct{})
		wg = crowd(srv, stop)
		time.Sleep(time.Millisecond)
		require.NoError(t, srv.Close())
		close(stop)
		wg.Wait()
		require.Zero(t, wireMembers(srv))
		consume(t)
	})
}

// TestGroupJoinStorm: JoinGroups that take a member id
// (MEMBER_ID_REQUIRED) in many groups and never come back with it leave
// nothing once their session timeout has passed.
func TestGroupJoinStorm(t *testing.T) {
	withGroups(t, func(c groupCall, s *strata.Store) {
		for i := range 2000 {
			join := kmsg.NewPtrJoinGroupRequest()
			join.SetVersion(4)
			join.Group, join.ProtocolType = fmt.Sprintf("storm%d", i), "consumer"
			join.SessionTimeoutMillis = 6000
			join.Protocols = append(join.Protocols, kmsg.JoinGroupRequestProtocol{Name: "range"})
			resp, err := handleJoinGroup(c.srv, header{clientID: "c"}, join)
			require.NoError(t, err)
			require.Equal(t, errMemberIDRequired, resp.(*kmsg.JoinGroupResponse).ErrorCode)
		}
		require.Len(t, s.Groups(), 2000, "claimed")
		time.Sleep(6*time.Second + time.Millisecond)
		synctest.Wait()
		c.srv.groups.mu.Lock()
		left := len(c.srv.groups.mu.m)
		c.srv.groups.mu.Unlock()
		require.Zero(t, left)
		require.Empty(t, s.Groups())
	})
}

// wireMembers is how many members and pending member ids the server's
// groups hold.
func wireMembers(srv *Server) int {
	srv.groups.mu.Lock()
	defer srv.groups.mu.Unlock()
	return srv.groups.mu.n
}

// TestWireMembersCap: the members and member ids handed out of all the
// groups together are at most maxWireMembers; a new member's JoinGroup
// past it is COORDINATOR_NOT_AVAILABLE, whatever its group, while a
// member id handed out still joins; once some have gone, new members join
// again.
func TestWireMembersCap(t *testing.T) {
	defer func(n int) { maxWireMembers = n }(maxWireMembers)
	maxWireMembers = 3
	withGroups(t, func(c groupCall, _ *strata.Store) {
		join := func(group string, version int16, member string) *kmsg.JoinGroupResponse {
			req := kmsg.NewPtrJoinGroupRequest()
			req.SetVersion(version)
			req.Group, req.MemberID, req.ProtocolType = group, member, "consumer"
			req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 10000
			req.Protocols = append(req.Protocols, kmsg.JoinGroupRequestProtocol{Name: "range"})
			resp, err := handleJoinGroup(c.srv, header{clientID: "c"}, req)
			require.NoError(t, err)
			return resp.(*kmsg.JoinGroupResponse)
		}
		a := join("a", 4, "")
		require.Equal(t, errMemberIDRequired, a.ErrorCode)
		require.Equal(t, errNone, join("b", 3, "").ErrorCode, "a group of one")
		require.Equal(t, errMemberIDRequired, join("c", 4, "").ErrorCode)
		require.Equal(t, 3, wireMembers(c.srv))
		require.Equal(t, errCoordinatorNotAvailable, join("d", 4, "").ErrorCode)
		require.Equal(t, errCoordinatorNotAvailable, join("a", 3, "").ErrorCode)
		require.Equal(t, errNone, join("a", 4, a.MemberID).ErrorCode, "a member id handed out joins")
		require.Equal(t, 3, wireMembers(c.srv))
		time.Sleep(10*time.Second + time.Millisecond) // every session over
		synctest.Wait()
		require.Zero(t, wireMembers(c.srv))
		require.Equal(t, errMemberIDRequired, join("d", 4, "").ErrorCode)
	})
}

// TestGroupSessionExpiresInRebalance: a member that stops heartbeating
// while a rebalance waits for it is evicted at its session timeout,
// before the longer rebalance timeout, and the join completes then
// without it.
func TestGroupSessionExpiresInRebalance(t *testing.T) {
	withGroups(t, func(c groupCall, _ *strata.Store) {
		c.stable(10*time.Second, time.Minute)
		joined := c.join(3, "", 10*time.Second, time.Minute)
		time.Sleep(10*time.Second - time.Millisecond)
		synctest.Wait()
		select {
		case <-joined:
			t.Fatal("the join completed before the silent member's session ended")
		default:
		}
		time.Sleep(2 * time.Millisecond)
		j := <-joined
		require.Equal(t, errNone, j.ErrorCode)
		require.Equal(t, int32(2), j.Generation)
		require.Len(t, j.Members, 1, "the silent member is out")
	})
}
