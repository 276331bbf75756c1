package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
	"github.com/stratalog/strata/group"
)

// TestGroupMetadataKafkaFormat checks the store's group metadata records
// and consumer protocol bytes against franz-go's encoding of Kafka's
// GroupMetadataKey, GroupMetadataValue and consumer protocol: byte for
// byte what the store writes, and what Kafka's versions 0 to 4 hold reads
// back.
func TestGroupMetadataKafkaFormat(t *testing.T) {
	sub := kmsg.NewConsumerMemberMetadata()
	sub.Version, sub.Topics = 1, []string{"orders", "audit"}
	sub.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "orders", Partitions: []int32{1, 0}}}
	asg := kmsg.NewConsumerMemberAssignment()
	asg.Version = 1
	asg.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "orders", Partitions: []int32{2, 0}}, {Topic: "audit", Partitions: []int32{0}}}
	parts := []strata.TopicPartition{{Topic: "orders", Partition: 2}, {Topic: "orders", Partition: 0}, {Topic: "audit", Partition: 0}}
	require.Equal(t, sub.AppendTo(nil), group.AppendSubscription(nil, sub.Topics,
		[]strata.TopicPartition{{Topic: "orders", Partition: 1}, {Topic: "orders", Partition: 0}}))
	require.Equal(t, asg.AppendTo(nil), group.AppendAssignment(nil, parts))

	key := kmsg.NewGroupMetadataKey()
	key.Version, key.Group = 2, "billing"
	require.Equal(t, key.AppendTo(nil), group.AppendGroupMetadataKey(nil, "billing"))

	protocol, leader, instance := "range", "kgo-1", "pod-7"
	v := kmsg.NewGroupMetadataValue()
	v.ProtocolType, v.Generation, v.Protocol, v.Leader = "consumer", 12, &protocol, &leader
	v.CurrentStateTimestamp = 1_700_000_000_000
	v.Members = []kmsg.GroupMetadataValueMember{{
		MemberID: "kgo-1", InstanceID: &instance, ClientID: "kgo", ClientHost: "/127.0.0.1",
		RebalanceTimeoutMillis: 60000, SessionTimeoutMillis: 45000,
		Subscription: sub.AppendTo(nil), Assignment: asg.AppendTo(nil),
	}}
	want := &strata.GroupMetadata{ProtocolType: "consumer", Generation: 12, Protocol: "range", Leader: "kgo-1",
		StateTime: time.UnixMilli(1_700_000_000_000).UTC(),
		Members: []strata.GroupMemberMetadata{{MemberID: "kgo-1", InstanceID: "pod-7", ClientID: "kgo", ClientHost: "/127.0.0.1",
			RebalanceTimeout: time.Minute, SessionTimeout: 45 * time.Second,
			Subscription: sub.AppendTo(nil), Assignment: asg.AppendTo(nil)}}}
	v.Version = 3
	require.Equal(t, v.AppendTo(nil), group.AppendGroupMetadataValue(nil, want), "the version the store writes")

	for version := int16(0); version <= 4; version++ {
		v.Version = version
		name, md, err := group.DecodeGroupMetadata(key.AppendTo(nil), v.AppendTo(nil))
		require.NoError(t, err, "version %d", version)
		require.Equal(t, "billing", name)
		w := *want
		w.Members = append([]strata.GroupMemberMetadata{}, want.Members...)
		if version < 3 {
			w.Members[0].InstanceID = ""
		}
		if version < 2 {
			w.StateTime = time.Time{}
		}
		if version < 1 {
			w.Members[0].RebalanceTimeout = 0
		}
		require.Equal(t, &w, md, "version %d", version)
	}
	got, _, err := group.DecodeAssignment(asg.AppendTo(nil))
	require.NoError(t, err)
	require.Equal(t, parts, got)
}

// TestWireGroupMembershipRecorded: the membership of a classic group of
// Kafka clients is recorded in the store at each Stable generation, with
// the members' client ids and assignments, and as empty once they left.
func TestWireGroupMembershipRecorded(t *testing.T) {
	s, srv := serve(t, nil)
	ctx := context.Background()
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 3}))
	produce := orderProducer(t, s, "orders", 3)
	produce(30)
	seen := &counter{}
	a := startGroupConsumer(t, srv, "billing", "orders", kgo.RangeBalancer(), seen)
	eventually(t, "a owns every partition", func() bool { return a.owned() == 3 })
	b := startGroupConsumer(t, srv, "billing", "orders", kgo.RangeBalancer(), seen)
	var d strata.GroupDescription
	eventually(t, "the store describes two members", func() bool {
		var err error
		d, err = s.DescribeGroup(ctx, "billing")
		require.NoError(t, err)
		return len(d.Members) == 2 && a.owned()+b.owned() == 3
	})
	require.Equal(t, strata.GroupStable, d.State)
	require.Equal(t, "consumer", d.ProtocolType)
	require.Equal(t, "range", d.Protocol)
	var assigned []strata.TopicPartition
	for _, m := range d.Members {
		require.Equal(t, "kgo", m.ClientID)
		require.Equal(t, "/127.0.0.1", m.ClientHost)
		require.Equal(t, []string{"orders"}, m.Topics)
		assigned = append(assigned, m.Assigned...)
	}
	require.ElementsMatch(t, []strata.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}, {Topic: "orders", Partition: 2}}, assigned)

	a.stop()
	b.stop()
	eventually(t, "the store describes the group empty", func() bool {
		var err error
		d, err = s.DescribeGroup(ctx, "billing")
		require.NoError(t, err)
		return d.State == strata.GroupEmpty
	})
	require.Empty(t, d.Members)
	require.Equal(t, "consumer", d.ProtocolType)
}

// TestGroup848MembershipRecorded: the members of a KIP-848 consumer group
// are the store's (HeartbeatGroup), recorded with their client ids and
// addresses.
func TestGroup848MembershipRecorded(t *testing.T) {
	s, srv := serve(t, nil)
	ctx := context.Background()
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}))
	orderProducer(t, s, "orders", 2)(10)
	var seen counter
	a := startConsumer848(t, srv, "billing", "orders", &seen, kgo.ClientID("kgo-848"))
	eventually(t, "a owns every partition", func() bool { return a.owned() == 2 })
	d, err := s.DescribeGroup(ctx, "billing")
	require.NoError(t, err)
	require.Len(t, d.Members, 1)
	m := d.Members[0]
	require.Equal(t, "kgo-848", m.ClientID)
	require.Equal(t, "/127.0.0.1", m.ClientHost)
	require.Equal(t, []strata.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}}, m.Assigned)
}

// TestWireGroupEmptyAtClose: a classic group whose members are connected
// when the server closes is recorded empty: the store, which lives on,
// does not describe members that are gone.
func TestWireGroupEmptyAtClose(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}))
	srv, err := broker.Start(s, &broker.Options{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	var seen counter
	a := startGroupConsumer(t, srv, "billing", "orders", kgo.RangeBalancer(), &seen)
	eventually(t, "a owns every partition", func() bool { return a.owned() == 2 })
	d, err := s.DescribeGroup(context.Background(), "billing")
	require.NoError(t, err)
	require.Equal(t, strata.GroupStable, d.State)

	require.NoError(t, srv.Close())
	a.stop()
	d, err = s.DescribeGroup(context.Background(), "billing")
	require.NoError(t, err)
	require.Equal(t, strata.GroupEmpty, d.State)
	require.Empty(t, d.Members)
}
