package broker_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// TestConsumerGroupLeaveByMemberID checks that a ConsumerGroupHeartbeat
// with member epoch -1 and no instance id removes the member of that id,
// a static one included, as Kafka's GroupMetadataManager.consumerGroupLeave
// fences the member by id when the request names no instance. franz-go's
// suite removes the static members its ETL consumers leave behind that
// way, from an admin client (leaveGroupStatic), so that their partitions
// go to the others at once rather than at the end of their session
// timeout.
func TestConsumerGroupLeaveByMemberID(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}))
	c := dial(t, srv)
	members := func() []string {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{"g"}
		resp := c.roundTrip(req).(*kmsg.ConsumerGroupDescribeResponse)
		var ids []string
		for _, m := range resp.Groups[0].Members {
			ids = append(ids, m.MemberID)
		}
		return ids
	}

	r := cgReq("g", "A", 0, "orders")
	r.InstanceID = kmsg.StringPtr("host-1")
	require.Equal(t, int16(0), c.cg(r).ErrorCode)
	require.Equal(t, []string{"A"}, members())

	leave := c.cg(cgReq("g", "A", -1))
	require.Equal(t, int16(0), leave.ErrorCode, "the admin's leave by member id")
	require.Equal(t, int32(-1), leave.MemberEpoch)
	require.Empty(t, members())

	// With an instance id, Kafka looks the static member up by it:
	// UNKNOWN_MEMBER_ID if none has it, FENCED_INSTANCE_ID if another
	// member has it.
	join := func(member, instance string) {
		r := cgReq("g", member, 0, "orders")
		r.InstanceID = kmsg.StringPtr(instance)
		require.Equal(t, int16(0), c.cg(r).ErrorCode, member)
	}
	leaveAs := func(member, instance string) int16 {
		r := cgReq("g", member, -1)
		r.InstanceID = kmsg.StringPtr(instance)
		return c.cg(r).ErrorCode
	}
	join("A", "host-1")
	join("B", "host-2")
	require.Equal(t, int16(25), leaveAs("A", "host-3"), "an instance id no member has")
	require.Equal(t, int16(82), leaveAs("A", "host-2"), "another member's instance id")
	require.Equal(t, int16(0), leaveAs("A", "host-1"))
	require.Equal(t, []string{"B"}, members())
}
