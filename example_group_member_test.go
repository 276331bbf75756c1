package strata_test

import (
	"context"
	"fmt"

	"github.com/stratalog/strata"
)

// HeartbeatGroup is how a consumer outside the process (a Kafka client
// of KIP-848's protocol, which package broker serves) takes part in a
// group with the store's own consumers: it reports what it holds, and
// learns what it may hold.
func ExampleStore_HeartbeatGroup() {
	s, done := openOffsetsExample()
	defer done()

	a, err := s.HeartbeatGroup("billing", strata.GroupHeartbeat{Topics: []string{"orders"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(a.MemberID, a.Generation, a.Assigned)

	// A consumer of the process joins: orders-1 is to go to it.
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	a, err = s.HeartbeatGroup("billing", strata.GroupHeartbeat{MemberID: a.MemberID})
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Generation, a.Assigned)

	// The remote member stops fetching orders-1 and reports it gone; the
	// consumer receives it at its next Poll.
	a, err = s.HeartbeatGroup("billing", strata.GroupHeartbeat{MemberID: a.MemberID, Owned: a.Assigned})
	if err != nil {
		panic(err)
	}
	if _, err := c.Poll(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(a.Assigned, c.Assignment())
	// Output:
	// billing-1 1 [orders-0 orders-1]
	// 2 [orders-0]
	// [orders-0] [orders-1]
}

// LeaveGroup frees a remote member's partitions at once.
func ExampleStore_LeaveGroup() {
	s, done := openOffsetsExample()
	defer done()
	a, err := s.HeartbeatGroup("billing", strata.GroupHeartbeat{Topics: []string{"orders"}})
	if err != nil {
		panic(err)
	}
	if err := s.LeaveGroup("billing", a.MemberID); err != nil {
		panic(err)
	}
	fmt.Println(len(s.GroupMembers("billing")))
	// Output:
	// 0
}

// CommitAsMember commits a remote member's positions at the generation of
// its last heartbeat.
func ExampleStore_CommitAsMember() {
	s, done := openOffsetsExample()
	defer done()
	a, err := s.HeartbeatGroup("billing", strata.GroupHeartbeat{Topics: []string{"orders"}})
	if err != nil {
		panic(err)
	}
	err = s.CommitAsMember("billing", a.MemberID, a.Generation, map[strata.TopicPartition]strata.OffsetAndMetadata{
		{Topic: "orders", Partition: 0}: {Offset: 4, Metadata: "remote"},
	})
	if err != nil {
		panic(err)
	}
	om, _ := s.Committed("billing", "orders", 0)
	fmt.Println(om.Offset, om.Metadata)
	// Output:
	// 4 remote
}
