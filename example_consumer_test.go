package strata_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stratalog/strata"
)

// exampleOrders opens a store with a topic "orders" of parts partitions,
// each holding perPart records valued "p<partition>-<i>", stamped
// exampleTime + i minutes.
func exampleOrders(parts, perPart int) (s *strata.Store, done func()) {
	s, done = exampleStore(&strata.Options{Now: func() time.Time { return exampleTime.Add(time.Hour) }})
	if err := s.CreateTopic("orders", strata.TopicConfig{Partitions: parts}); err != nil {
		panic(err)
	}
	for p := range parts {
		for i := range perPart {
			r := strata.Record{Value: fmt.Appendf(nil, "p%d-%d", p, i), Timestamp: exampleTime.Add(time.Duration(i) * time.Minute)}
			if _, err := s.AppendTo(context.Background(), "orders", p, r); err != nil {
				panic(err)
			}
		}
	}
	return s, done
}

// printMessages prints where each message comes from and its value.
func printMessages(msgs []strata.Message) {
	for _, m := range msgs {
		fmt.Printf("%s-%d@%d %s\n", m.Topic, m.Partition, m.Offset, m.Value)
	}
}

// A consumer of group "billing": poll, process, commit.
func ExampleStore_Consumer() {
	s, done := exampleOrders(2, 2)
	defer done()
	ctx := context.Background()

	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{
		AutoOffsetReset: strata.ResetEarliest, // no commit yet: from the start
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	msgs, err := c.Poll(ctx)
	if err != nil {
		panic(err)
	}
	printMessages(msgs)
	if err := c.Commit(ctx); err != nil { // processed: commit
		panic(err)
	}
	om, _ := s.Committed("billing", "orders", 1)
	fmt.Println("committed orders-1:", om.Offset)
	// Output:
	// orders-0@0 p0-0
	// orders-0@1 p0-1
	// orders-1@0 p1-0
	// orders-1@1 p1-1
	// committed orders-1: 2
}

// Two consumers of one group share its partitions. When the second joins,
// the first gives up a partition at its next Poll, committing in OnRevoked;
// the second reads on from that commit. When the first closes, the second
// takes the rest. Nothing is delivered twice.
func ExampleConsumer_rebalance() {
	s, done := exampleOrders(2, 2)
	defer done()
	ctx := context.Background()
	join := func() *strata.Consumer {
		c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{
			AutoOffsetReset: strata.ResetEarliest,
			OnAssigned: func(_ context.Context, c *strata.Consumer, parts []strata.TopicPartition) {
				fmt.Println(c.MemberID(), "is assigned", parts)
			},
			OnRevoked: func(ctx context.Context, c *strata.Consumer, parts []strata.TopicPartition) {
				fmt.Println(c.MemberID(), "gives up", parts, "committing first")
				if err := c.Commit(ctx); err != nil {
					fmt.Println("commit:", err)
				}
			},
		})
		if err != nil {
			panic(err)
		}
		return c
	}
	poll := func(c *strata.Consumer) {
		msgs, err := c.Poll(ctx)
		if err != nil {
			panic(err)
		}
		for _, m := range msgs {
			fmt.Printf("  %s reads %s-%d@%d %s\n", c.MemberID(), m.Topic, m.Partition, m.Offset, m.Value)
		}
		if err := c.Commit(ctx); err != nil {
			panic(err)
		}
	}
	appendEach := func(value string) {
		for p := range 2 {
			if _, err := s.AppendTo(ctx, "orders", p, strata.Record{Value: []byte(value)}); err != nil {
				panic(err)
			}
		}
	}

	a := join()
	poll(a)
	b := join()
	appendEach("late")
	poll(a) // revokes orders-1, reads orders-0 on
	poll(b) // is handed orders-1, from a's commit
	if err := a.Close(); err != nil {
		panic(err)
	}
	appendEach("later")
	poll(b) // is handed orders-0 too
	if err := b.Close(); err != nil {
		panic(err)
	}
	for p := range 2 {
		om, _ := s.Committed("billing", "orders", p)
		fmt.Printf("committed orders-%d: %d\n", p, om.Offset)
	}
	// Output:
	// billing-1 is assigned [orders-0 orders-1]
	//   billing-1 reads orders-0@0 p0-0
	//   billing-1 reads orders-0@1 p0-1
	//   billing-1 reads orders-1@0 p1-0
	//   billing-1 reads orders-1@1 p1-1
	// billing-1 gives up [orders-1] committing first
	//   billing-1 reads orders-0@2 late
	// billing-2 is assigned [orders-1]
	//   billing-2 reads orders-1@2 late
	// billing-1 gives up [orders-0] committing first
	// billing-2 is assigned [orders-0]
	//   billing-2 reads orders-0@3 later
	//   billing-2 reads orders-1@3 later
	// billing-2 gives up [orders-0 orders-1] committing first
	// committed orders-0: 4
	// committed orders-1: 4
}

// Poll returns the records of the consumer's partitions, up to
// MaxPollRecords; the next Poll goes on from there.
func ExampleConsumer_Poll() {
	s, done := exampleOrders(1, 5)
	defer done()
	ctx := context.Background()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{
		AutoOffsetReset: strata.ResetEarliest,
		MaxPollRecords:  2,
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for range 3 {
		msgs, err := c.Poll(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println(len(msgs), "records from offset", msgs[0].Offset)
	}
	// Output:
	// 2 records from offset 0
	// 2 records from offset 2
	// 1 records from offset 4
}

// MemberID is the consumer's id in its group: the group's name and the
// order in which its members joined.
func ExampleConsumer_MemberID() {
	s, done := exampleOrders(1, 0)
	defer done()
	for range 2 {
		c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{})
		if err != nil {
			panic(err)
		}
		defer c.Close()
		fmt.Println(c.MemberID())
	}
	// Output:
	// billing-1
	// billing-2
}

// A consumer learns its partitions at its first Poll.
func ExampleConsumer_Assignment() {
	s, done := exampleOrders(3, 1)
	defer done()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	if err != nil {
		panic(err)
	}
	fmt.Println("before Poll:", c.Assignment())
	if _, err := c.Poll(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println("after Poll:", c.Assignment())
	if err := c.Close(); err != nil {
		panic(err)
	}
	fmt.Println("after Close:", c.Assignment())
	// Output:
	// before Poll: []
	// after Poll: [orders-0 orders-1 orders-2]
	// after Close: []
}

// Commit commits the consumer's position in each of its partitions: past
// what Poll returned.
func ExampleConsumer_Commit() {
	s, done := exampleOrders(1, 3)
	defer done()
	ctx := context.Background()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	msgs, err := c.Poll(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("processed", len(msgs))
	if err := c.Commit(ctx); err != nil {
		panic(err)
	}
	om, _ := s.Committed("billing", "orders", 0)
	fmt.Println("committed:", om.Offset)
	// Output:
	// processed 3
	// committed: 3
}

// CommitOffsets commits offsets of the caller's choosing: the next offset
// to read in each partition.
func ExampleConsumer_CommitOffsets() {
	s, done := exampleOrders(1, 3)
	defer done()
	ctx := context.Background()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if _, err := c.Poll(ctx); err != nil {
		panic(err)
	}
	tp := strata.TopicPartition{Topic: "orders", Partition: 0}
	if err := c.CommitOffsets(ctx, map[strata.TopicPartition]int64{tp: 1}); err != nil {
		panic(err)
	}
	om, _ := s.Committed("billing", "orders", 0)
	fmt.Println("committed:", om.Offset)
	err = c.CommitOffsets(ctx, map[strata.TopicPartition]int64{tp: 9})
	fmt.Println("past the end:", errors.Is(err, strata.ErrOffsetOutOfRange))
	// Output:
	// committed: 1
	// past the end: true
}

// CommitMessages commits the messages processed so far, whatever else Poll
// returned: here the first two of three.
func ExampleConsumer_CommitMessages() {
	s, done := exampleOrders(1, 3)
	defer done()
	ctx := context.Background()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	msgs, err := c.Poll(ctx)
	if err != nil {
		panic(err)
	}
	if err := c.CommitMessages(ctx, msgs[:2]...); err != nil {
		panic(err)
	}
	om, _ := s.Committed("billing", "orders", 0)
	fmt.Println("committed:", om.Offset)
	// Output:
	// committed: 2
}

// Close leaves the group, running OnRevoked first with a context of its
// own: the commit there lands even though the application's context has
// already ended, as it has when a service shuts down.
func ExampleConsumer_Close() {
	s, done := exampleOrders(1, 3)
	defer done()
	appCtx, shutdown := context.WithCancel(context.Background())
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{
		AutoOffsetReset: strata.ResetEarliest,
		OnRevoked: func(ctx context.Context, c *strata.Consumer, parts []strata.TopicPartition) {
			fmt.Println("revoked", parts, "commit:", c.Commit(ctx))
		},
	})
	if err != nil {
		panic(err)
	}
	if _, err := c.Poll(appCtx); err != nil {
		panic(err)
	}
	shutdown()
	if err := c.Close(); err != nil {
		panic(err)
	}
	om, _ := s.Committed("billing", "orders", 0)
	fmt.Println("committed:", om.Offset)
	_, err = c.Poll(context.Background())
	fmt.Println(errors.Is(err, strata.ErrClosed))
	// Output:
	// revoked [orders-0] commit: <nil>
	// committed: 3
	// true
}

// Seek moves the consumer in a partition it owns: here back, to read a
// record again.
func ExampleConsumer_Seek() {
	s, done := exampleOrders(1, 3)
	defer done()
	ctx := context.Background()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if _, err := c.Poll(ctx); err != nil {
		panic(err)
	}
	tp := strata.TopicPartition{Topic: "orders", Partition: 0}
	if err := c.Seek(tp, 1); err != nil {
		panic(err)
	}
	msgs, err := c.Poll(ctx)
	if err != nil {
		panic(err)
	}
	printMessages(msgs)
	err = c.Seek(tp, 7)
	fmt.Println("past the end:", errors.Is(err, strata.ErrOffsetOutOfRange))
	// Output:
	// orders-0@1 p0-1
	// orders-0@2 p0-2
	// past the end: true
}

// SeekTo finds a partition's offset by time: the first record stamped at
// or after it.
func ExampleConsumer_SeekTo() {
	s, done := exampleOrders(1, 5) // stamped a minute apart
	defer done()
	ctx := context.Background()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{
		OnAssigned: func(_ context.Context, c *strata.Consumer, parts []strata.TopicPartition) {
			for _, tp := range parts {
				if err := c.SeekTo(tp, strata.AtTime(exampleTime.Add(150*time.Second))); err != nil {
					panic(err)
				}
			}
		},
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	msgs, err := c.Poll(ctx)
	if err != nil {
		panic(err)
	}
	for _, m := range msgs {
		fmt.Println(m.Offset, m.Timestamp.Format(time.TimeOnly))
	}
	// Output:
	// 3 09:03:00
	// 4 09:04:00
}

// A paused partition returns nothing until it is resumed; the consumer
// keeps it meanwhile.
func ExampleConsumer_Pause() {
	s, done := exampleOrders(2, 1)
	defer done()
	ctx := context.Background()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	slow := strata.TopicPartition{Topic: "orders", Partition: 0}
	if err := c.Pause(slow); err != nil {
		panic(err)
	}
	msgs, err := c.Poll(ctx)
	if err != nil {
		panic(err)
	}
	printMessages(msgs)
	fmt.Println("paused:", c.Paused(), "owned:", c.Assignment())
	// Output:
	// orders-1@0 p1-0
	// paused: [orders-0] owned: [orders-0 orders-1]
}

// Resume lets a paused partition be read again, from where it stopped.
func ExampleConsumer_Resume() {
	s, done := exampleOrders(2, 1)
	defer done()
	ctx := context.Background()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	tp := strata.TopicPartition{Topic: "orders", Partition: 1}
	if err := c.Pause(tp); err != nil {
		panic(err)
	}
	for _, step := range []string{"paused", "resumed"} {
		msgs, err := c.Poll(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println(step + ":")
		printMessages(msgs)
		if err := c.Resume(tp); err != nil {
			panic(err)
		}
	}
	// Output:
	// paused:
	// orders-0@0 p0-0
	// resumed:
	// orders-1@0 p1-0
}

// Paused lists the paused partitions.
func ExampleConsumer_Paused() {
	s, done := exampleOrders(3, 0)
	defer done()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if err := c.Pause(strata.TopicPartition{Topic: "orders", Partition: 2}, strata.TopicPartition{Topic: "orders", Partition: 0}); err != nil {
		panic(err)
	}
	fmt.Println(c.Paused())
	err = c.Pause(strata.TopicPartition{Topic: "payments", Partition: 0})
	fmt.Println(errors.Is(err, strata.ErrNotOwner))
	// Output:
	// [orders-0 orders-2]
	// true
}

// Messages ranges over the consumer's messages; a commit in the loop
// covers the message in hand, and after a break the consumer goes on right
// after it.
func ExampleConsumer_Messages() {
	s, done := exampleOrders(1, 5)
	defer done()
	ctx := context.Background()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for m, err := range c.Messages(ctx) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d %s\n", m.Offset, m.Value)
		if err := c.CommitMessages(ctx, m); err != nil {
			panic(err)
		}
		if m.Offset == 2 {
			break
		}
	}
	om, _ := s.Committed("billing", "orders", 0)
	fmt.Println("committed:", om.Offset)
	// Output:
	// 0 p0-0
	// 1 p0-1
	// 2 p0-2
	// committed: 3
}

// DeadLetter moves a record that cannot be processed to a dead-letter
// topic, with Kafka Connect's headers saying where it came from and why,
// and commits past it.
func ExampleConsumer_DeadLetter() {
	s, done := exampleOrders(1, 3)
	defer done()
	ctx := context.Background()
	c, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	msgs, err := c.Poll(ctx)
	if err != nil {
		panic(err)
	}
	for _, m := range msgs {
		if string(m.Value) == "p0-1" {
			if err := c.DeadLetter(ctx, "orders.dlq", m, errors.New("cannot parse order")); err != nil {
				panic(err)
			}
			continue
		}
		if err := c.CommitMessages(ctx, m); err != nil {
			panic(err)
		}
	}
	om, _ := s.Committed("billing", "orders", 0)
	fmt.Println("committed:", om.Offset)
	dead, err := s.Read(ctx, "orders.dlq", 0, 0, 10)
	if err != nil {
		panic(err)
	}
	fmt.Println("dead letter:", string(dead[0].Value))
	for _, h := range dead[0].Headers {
		if strings.HasPrefix(h.Key, "__connect.") {
			fmt.Printf("  %s: %s\n", h.Key, h.Value)
		}
	}
	// Output:
	// committed: 3
	// dead letter: p0-1
	//   __connect.errors.topic: orders
	//   __connect.errors.partition: 0
	//   __connect.errors.offset: 1
	//   __connect.errors.exception.class.name: *errors.errorString
	//   __connect.errors.exception.message: cannot parse order
}
