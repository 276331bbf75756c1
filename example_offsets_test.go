package strata_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stratalog/strata"
)

// openOffsetsExample opens a store whose clock reads exampleTime, with a
// topic "orders" of two partitions holding five records each, stamped a
// minute apart from 08:00.
func openOffsetsExample() (s *strata.Store, done func()) {
	s, done = exampleStore(&strata.Options{Now: func() time.Time { return exampleTime }})
	if err := s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}); err != nil {
		panic(err)
	}
	for part := range 2 {
		for i := range 5 {
			r := strata.Record{Value: []byte("order"), Timestamp: exampleTime.Add(-time.Hour + time.Duration(i)*time.Minute)}
			if _, err := s.AppendTo(context.Background(), "orders", part, r); err != nil {
				panic(err)
			}
		}
	}
	return s, done
}

// Commit stores a group's offset from outside any consumer — a tool that
// processed records itself, or a reset by hand — as Kafka's standalone
// commit does. The offset is the next one to read.
func ExampleStore_Commit() {
	s, done := openOffsetsExample()
	defer done()

	if err := s.Commit("billing", "orders", 0, 3, "invoice run 7"); err != nil {
		panic(err)
	}
	om, _ := s.Committed("billing", "orders", 0)
	fmt.Printf("offset %d, metadata %q, at %s\n", om.Offset, om.Metadata, om.CommitTime.UTC().Format(time.TimeOnly))

	// An offset past the end is refused, and the message says the range.
	err := s.Commit("billing", "orders", 0, 9, "")
	fmt.Println(errors.Is(err, strata.ErrOffsetOutOfRange))
	fmt.Println(err)
	// Output:
	// offset 3, metadata "invoice run 7", at 09:00:00
	// true
	// strata: commit of offset 9 for orders-0 out of range [0, 5]: offset out of range
}

// Committed says whether a group has an offset for a partition.
func ExampleStore_Committed() {
	s, done := openOffsetsExample()
	defer done()
	if err := s.Commit("billing", "orders", 1, 5, ""); err != nil {
		panic(err)
	}
	for part := range 2 {
		om, ok := s.Committed("billing", "orders", part)
		fmt.Println(part, om.Offset, ok)
	}
	// Output:
	// 0 0 false
	// 1 5 true
}

// Groups lists the groups with committed offsets (or live consumers),
// sorted.
func ExampleStore_Groups() {
	s, done := openOffsetsExample()
	defer done()
	for _, g := range []string{"shipping", "billing"} {
		if err := s.Commit(g, "orders", 0, 1, ""); err != nil {
			panic(err)
		}
	}
	fmt.Println(s.Groups())
	// Output:
	// [billing shipping]
}

// Lag is how many records a group has yet to commit past, and how old the
// first of them is: the two figures to alert on.
func ExampleStore_Lag() {
	s, done := openOffsetsExample()
	defer done()
	if err := s.Commit("billing", "orders", 0, 2, ""); err != nil {
		panic(err)
	}
	lags, err := s.Lag(context.Background(), "billing", "orders")
	if err != nil {
		panic(err)
	}
	for _, l := range lags {
		fmt.Printf("partition %d: committed %d of %d, lag %d, oldest unconsumed from %s\n",
			l.Partition, l.Committed, l.EndOffset, l.Lag, l.OldestUnconsumed.UTC().Format(time.TimeOnly))
	}
	// Output:
	// partition 0: committed 2 of 5, lag 3, oldest unconsumed from 08:02:00
	// partition 1: committed -1 of 5, lag 5, oldest unconsumed from 08:00:00
}

// ResetOffsets moves a group's offsets on every partition of a topic, as
// kafka-consumer-groups --reset-offsets does; a dry run only returns the
// plan. The group must have no consumers.
func ExampleStore_ResetOffsets() {
	s, done := openOffsetsExample()
	defer done()
	if err := s.Commit("billing", "orders", 0, 4, ""); err != nil {
		panic(err)
	}

	plan, err := s.ResetOffsets("billing", "orders", strata.ToEarliest, true)
	if err != nil {
		panic(err)
	}
	fmt.Printf("dry run: %+v\n", plan)
	om, _ := s.Committed("billing", "orders", 0)
	fmt.Println("still at", om.Offset)

	if _, err := s.ResetOffsets("billing", "orders", strata.ToLatest, false); err != nil {
		panic(err)
	}
	for part := range 2 {
		om, _ := s.Committed("billing", "orders", part)
		fmt.Println("partition", part, "now at", om.Offset)
	}
	// Output:
	// dry run: [{Partition:0 From:4 To:0} {Partition:1 From:-1 To:0}]
	// still at 4
	// partition 0 now at 5
	// partition 1 now at 5
}

// ToOffset moves every partition to one offset, clamped to each
// partition's range.
func ExampleToOffset() {
	s, done := openOffsetsExample()
	defer done()
	if err := s.DeleteRecords("orders", 1, 4); err != nil { // partition 1 now starts at 4
		panic(err)
	}
	plan, err := s.ResetOffsets("billing", "orders", strata.ToOffset(2), true)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", plan)
	// Output:
	// [{Partition:0 From:-1 To:2} {Partition:1 From:-1 To:4}]
}

// ShiftBy moves each committed offset by n: back to reprocess, forward to
// skip.
func ExampleShiftBy() {
	s, done := openOffsetsExample()
	defer done()
	if err := s.Commit("billing", "orders", 0, 4, ""); err != nil {
		panic(err)
	}
	if err := s.Commit("billing", "orders", 1, 1, ""); err != nil {
		panic(err)
	}
	plan, err := s.ResetOffsets("billing", "orders", strata.ShiftBy(-2), true)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", plan)
	// Output:
	// [{Partition:0 From:4 To:2} {Partition:1 From:1 To:0}]
}

// ToTime moves to the first record at or after a time: "reprocess
// everything since 08:03".
func ExampleToTime() {
	s, done := openOffsetsExample()
	defer done()
	plan, err := s.ResetOffsets("billing", "orders", strata.ToTime(exampleTime.Add(-57*time.Minute)), true)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", plan)
	// Output:
	// [{Partition:0 From:-1 To:3} {Partition:1 From:-1 To:3}]
}

// DeleteGroupOffsets forgets a group's committed offsets, as
// kafka-consumer-groups --delete does.
func ExampleStore_DeleteGroupOffsets() {
	s, done := openOffsetsExample()
	defer done()
	if err := s.Commit("billing", "orders", 0, 3, ""); err != nil {
		panic(err)
	}
	fmt.Println(s.Groups())
	if err := s.DeleteGroupOffsets("billing"); err != nil {
		panic(err)
	}
	_, ok := s.Committed("billing", "orders", 0)
	fmt.Println(s.Groups(), ok)
	// Output:
	// [billing]
	// [] false
}

// AtTime finds the first offset at or after a time; -1 when no record is
// that late.
func ExampleAtTime() {
	s, done := openOffsetsExample()
	defer done()
	for _, at := range []time.Duration{-time.Hour, -58 * time.Minute, -90 * time.Second, 0} {
		off, err := s.ListOffsets("orders", 0, strata.AtTime(exampleTime.Add(at)))
		if err != nil {
			panic(err)
		}
		fmt.Println(exampleTime.Add(at).Format(time.TimeOnly), off)
	}
	// Output:
	// 08:00:00 0
	// 08:02:00 2
	// 08:58:30 -1
	// 09:00:00 -1
}

// DeletePartitionOffsets deletes some of a group's offsets, those of
// partitions no consumer of the group subscribes to.
func ExampleStore_DeletePartitionOffsets() {
	s, done := openOffsetsExample()
	defer done()
	for part := range 2 {
		if err := s.Commit("billing", "orders", part, 3, ""); err != nil {
			panic(err)
		}
	}
	if err := s.DeletePartitionOffsets("billing", []strata.TopicPartition{{Topic: "orders", Partition: 1}}); err != nil {
		panic(err)
	}
	_, ok0 := s.Committed("billing", "orders", 0)
	_, ok1 := s.Committed("billing", "orders", 1)
	fmt.Println(ok0, ok1)
	// Output:
	// true false
}

// ClaimGroup is what package broker calls for a group whose members are
// Kafka clients: the store then refuses consumers of its own for it.
func ExampleStore_ClaimGroup() {
	s, done := openOffsetsExample()
	defer done()
	release, err := s.ClaimGroup("billing")
	if err != nil {
		panic(err)
	}
	_, err = s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{})
	fmt.Println(errors.Is(err, strata.ErrGroupClaimed))
	release()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	_, err = s.ClaimGroup("billing")
	fmt.Println(errors.Is(err, strata.ErrGroupActive))
	// Output:
	// true
	// true
}

// GroupMembers lists a group's consumers in the process, with what they
// own once they have polled.
func ExampleStore_GroupMembers() {
	s, done := openOffsetsExample()
	defer done()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if _, err := c.Poll(context.Background()); err != nil {
		panic(err)
	}
	for _, m := range s.GroupMembers("billing") {
		fmt.Println(m.ID, m.Topics, m.Owned)
	}
	// Output:
	// billing-1 [orders] [orders-0 orders-1]
}
