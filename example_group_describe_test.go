package strata_test

import (
	"context"
	"fmt"
	"time"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/group"
)

// DescribeGroup is kafka-consumer-groups --describe: the group's members
// as recorded at its last rebalance, and per partition the committed
// offset, the lag and the age of the oldest record not consumed yet.
func ExampleStore_DescribeGroup() {
	s, done := openOffsetsExample()
	defer done()
	ctx := context.Background()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, MaxPollRecords: 3})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if _, err := c.Poll(ctx); err != nil {
		panic(err)
	}
	if err := c.Commit(ctx); err != nil {
		panic(err)
	}

	d, err := s.DescribeGroup(ctx, "billing")
	if err != nil {
		panic(err)
	}
	fmt.Println(d.State, d.Protocol, "generation", d.Generation)
	for _, m := range d.Members {
		fmt.Println(m.MemberID, m.ClientID, m.ClientHost, m.Assigned)
	}
	for _, p := range d.Partitions {
		age := exampleTime.Sub(p.OldestUnconsumed)
		fmt.Printf("%s-%d committed %d end %d lag %d oldest unconsumed %s old\n", p.Topic, p.Partition, p.Committed, p.EndOffset, p.Lag, age)
	}

	_, err = s.DescribeGroup(ctx, "nobody")
	fmt.Println(err)
	// Output:
	// Stable range generation 1
	// billing-1 strata localhost [orders-0 orders-1]
	// orders-0 committed 3 end 5 lag 2 oldest unconsumed 57m0s old
	// orders-1 committed 0 end 5 lag 5 oldest unconsumed 1h0m0s old
	// strata: group "nobody": unknown group
}

// ListGroups is kafka-consumer-groups --list --state: every group the
// store knows, with its state and members.
func ExampleStore_ListGroups() {
	s, done := openOffsetsExample()
	defer done()
	if err := s.Commit("audit", "orders", 0, 5, ""); err != nil {
		panic(err)
	}
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	groups, err := s.ListGroups()
	if err != nil {
		panic(err)
	}
	for _, g := range groups {
		fmt.Println(g.Group, g.State, g.Protocol, g.Members)
	}
	// Output:
	// audit Empty  0
	// billing Stable range 1
}

// PublishGroup records the membership of a group whose members the store
// does not run, as package broker does for Kafka clients of the classic
// group protocol: DescribeGroup, and Kafka's tools reading
// __consumer_offsets, see it.
func ExampleStore_PublishGroup() {
	s, done := openOffsetsExample()
	defer done()
	release, err := s.ClaimGroup("billing")
	if err != nil {
		panic(err)
	}
	defer release()
	err = s.PublishGroup("billing", &strata.GroupMetadata{
		ProtocolType: group.ConsumerProtocolType, Generation: 3, Protocol: "range", Leader: "rdkafka-9f1c",
		Members: []strata.GroupMemberMetadata{{
			MemberID: "rdkafka-9f1c", ClientID: "rdkafka", ClientHost: "/10.0.0.7",
			SessionTimeout: 45 * time.Second, RebalanceTimeout: 5 * time.Minute,
			Subscription: group.AppendSubscription(nil, []string{"orders"}, nil),
			Assignment:   group.AppendAssignment(nil, []strata.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}}),
		}},
	})
	if err != nil {
		panic(err)
	}
	d, err := s.DescribeGroup(context.Background(), "billing")
	if err != nil {
		panic(err)
	}
	fmt.Println(d.State, d.Generation, d.Members[0].MemberID, d.Members[0].ClientHost, d.Members[0].Assigned)
	// Output:
	// Stable 3 rdkafka-9f1c /10.0.0.7 [orders-0 orders-1]
}
