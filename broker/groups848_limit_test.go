package broker

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// TestConsumerGroupWireMembersCap checks that the KIP-848 members of all
// groups together are at most maxWireMembers: a new member past it is
// COORDINATOR_NOT_AVAILABLE, and joins once another has left.
func TestConsumerGroupWireMembersCap(t *testing.T) {
	defer func(n int) { maxWireMembers = n }(maxWireMembers)
	maxWireMembers = 2
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 1}))
	srv, err := New(s, nil)
	require.NoError(t, err)
	defer srv.Close()
	heartbeat := func(group, member string, epoch int32) int16 {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.SetVersion(1)
		req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = group, member, epoch, 30000
		req.SubscribedTopicNames = []string{"orders"}
		resp, err := handleConsumerGroupHeartbeat(srv, header{clientID: "c"}, req)
		require.NoError(t, err)
		return resp.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode
	}
	require.Equal(t, int16(0), heartbeat("g1", "A", 0))
	require.Equal(t, int16(0), heartbeat("g2", "B", 0))
	require.Equal(t, int16(0), heartbeat("g2", "B", 0), "a known member joins again in place")
	require.Equal(t, errCoordinatorNotAvailable, heartbeat("g3", "C", 0))
	require.Equal(t, errCoordinatorNotAvailable, heartbeat("g1", "C", 0))
	require.Equal(t, int16(0), heartbeat("g1", "A", -1), "A leaves")
	require.Equal(t, int16(0), heartbeat("g3", "C", 0))
	require.Equal(t, int64(2), srv.consumers.members.Load())
	srv.Close()
	require.Zero(t, srv.consumers.members.Load(), "Close forgets the members")
}
