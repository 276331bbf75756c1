package broker

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// TestConsumerGroupSweep: the members of a KIP-848 group that stop
// heartbeating are evicted from the store's group, and the broker
// forgets them and the group, though nobody calls on the group again.
func TestConsumerGroupSweep(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 1}))
	// The group's membership is recorded in __consumer_offsets: the topic,
	// whose flusher a bubble must not start, is created outside it.
	require.NoError(t, s.EnsureOffsetsTopic())
	synctest.Test(t, func(t *testing.T) {
		srv, err := New(s, nil)
		require.NoError(t, err)
		defer srv.Close()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.SetVersion(1)
		req.Group, req.MemberID, req.RebalanceTimeoutMillis = "g", "A", 30000
		req.SubscribedTopicNames = []string{"orders"}
		resp, err := handleConsumerGroupHeartbeat(srv, header{clientID: "c"}, req)
		require.NoError(t, err)
		require.Equal(t, int16(0), resp.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode)

		time.Sleep(40 * time.Second)
		synctest.Wait()
		groups, armed := srv.sweepState()
		require.Equal(t, 1, groups, "within the session timeout")
		require.True(t, armed)

		time.Sleep(20 * time.Second)
		synctest.Wait()
		groups, armed = srv.sweepState()
		require.Zero(t, groups, "the group is forgotten")
		require.False(t, armed, "no sweep is armed without groups")
	})
	require.Empty(t, s.GroupMembers("g"))
}

// sweepState returns how many KIP-848 groups srv keeps and whether a
// sweep is armed.
func (srv *Server) sweepState() (groups int, armed bool) {
	cs := &srv.consumers
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.mu.m), cs.mu.sweep != nil
}
