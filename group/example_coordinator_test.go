package group_test

import (
	"fmt"
	"time"

	"github.com/stratalog/strata/group"
)

// memoryLog is an OffsetLog that keeps the commits in a slice; the store
// appends them to __consumer_offsets instead.
type memoryLog struct{ commits []group.Commit }

func (l *memoryLog) Append(commits []group.Commit) error {
	l.commits = append(l.commits, commits...)
	return nil
}

// ExampleCoordinator runs the protocol for two consumers: the second one
// joins, the first revokes what moves, and only then does the second
// receive it.
func ExampleCoordinator() {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	c := group.NewCoordinator(&memoryLog{}, &group.Options{
		Now:        func() time.Time { return now },
		Partitions: func(topic string) int { return 4 },
	})

	a, _ := c.Join("billing", []string{"orders"})
	res, _ := c.Sync("billing", a.MemberID)
	fmt.Println(a.MemberID, "assigned", res.Assign)

	b, _ := c.Join("billing", []string{"orders"})
	res, _ = c.Sync("billing", b.MemberID)
	fmt.Println(b.MemberID, "pending", res.Pending)

	// a learns of the rebalance: it commits its position in what it
	// gives up, then revokes it.
	res, _ = c.Sync("billing", a.MemberID)
	fmt.Println(a.MemberID, "revoke", res.Revoke)
	a.Generation = res.Generation
	offsets := map[group.TopicPartition]group.OffsetAndMetadata{}
	for _, tp := range res.Revoke {
		offsets[tp] = group.OffsetAndMetadata{Offset: 100}
	}
	if err := c.Commit("billing", a, offsets); err != nil {
		fmt.Println(err)
	}
	_ = c.Revoked("billing", a.MemberID, res.Revoke)

	res, _ = c.Sync("billing", b.MemberID)
	committed, _ := c.Committed("billing", "orders", 3)
	fmt.Println(b.MemberID, "assigned", res.Assign, "starting at", committed.Offset)
	// Output:
	// billing-1 assigned [orders-0 orders-1 orders-2 orders-3]
	// billing-2 pending [orders-2 orders-3]
	// billing-1 revoke [orders-2 orders-3]
	// billing-2 assigned [orders-2 orders-3] starting at 100
}

// ExampleDecodeCommit shows the __consumer_offsets record of a commit.
func ExampleDecodeCommit() {
	key, value := group.EncodeCommit(group.Commit{
		Group: "g", Topic: "t", Partition: 3, Offset: 42, Metadata: "m",
		CommitTime: time.UnixMilli(1_700_000_000_000),
	})
	fmt.Printf("key   % x\nvalue % x\n", key, value)
	c, err := group.DecodeCommit(key, value)
	fmt.Println(c.Group, c.Topic, c.Partition, c.Offset, c.Metadata, c.CommitTime.UnixMilli(), err)
	// Output:
	// key   00 01 00 01 67 00 01 74 00 00 00 03
	// value 00 03 00 00 00 00 00 00 00 2a ff ff ff ff 00 01 6d 00 00 01 8b cf e5 68 00
	// g t 3 42 m 1700000000000 <nil>
}
