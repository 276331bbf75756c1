package strata_test

import (
	"context"
	"fmt"

	"github.com/stratalog/strata"
)

// A transaction writes to two topics at once: both records become visible
// together at Commit.
func ExampleStore_BeginTxn() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	for _, name := range []string{"orders", "audit"} {
		if err := s.CreateTopic(name, strata.TopicConfig{}); err != nil {
			panic(err)
		}
	}
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "order-service"})
	if err != nil {
		panic(err)
	}
	if err := tx.AppendTo(ctx, "orders", 0, strata.Record{Value: []byte("order 1")}); err != nil {
		panic(err)
	}
	if err := tx.AppendTo(ctx, "audit", 0, strata.Record{Value: []byte("created order 1")}); err != nil {
		panic(err)
	}
	if err := tx.Commit(ctx); err != nil {
		panic(err)
	}
	for _, name := range []string{"orders", "audit"} {
		for r, err := range s.Scan(name, 0, 0) {
			if err != nil {
				panic(err)
			}
			fmt.Printf("%s: %s\n", name, r.Value)
		}
	}
	// Output:
	// orders: order 1
	// audit: created order 1
}

// ID is the transactional id the transaction was begun with.
func ExampleTxn_ID() {
	s, done := exampleStore(nil)
	defer done()
	tx, err := s.BeginTxn(context.Background(), strata.TxnOptions{ID: "relay-1"})
	if err != nil {
		panic(err)
	}
	defer tx.Abort(context.Background())
	fmt.Println(tx.ID())
	// Output: relay-1
}

// Append routes records by key, as Store.Append does.
func ExampleTxn_Append() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("accounts", strata.TopicConfig{Partitions: 4}); err != nil {
		panic(err)
	}
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "transfer"})
	if err != nil {
		panic(err)
	}
	err = tx.Append(ctx, "accounts",
		strata.Record{Key: []byte("alice"), Value: []byte("-10")},
		strata.Record{Key: []byte("bob"), Value: []byte("+10")})
	if err != nil {
		panic(err)
	}
	if err := tx.Commit(ctx); err != nil {
		panic(err)
	}
	for _, key := range []string{"alice", "bob"} {
		part, _ := s.PartitionFor("accounts", []byte(key))
		for r, err := range s.Scan("accounts", part, 0) {
			if err != nil {
				panic(err)
			}
			fmt.Printf("%s in partition %d: %s\n", r.Key, part, r.Value)
		}
	}
	// Output:
	// alice in partition 1: -10
	// bob in partition 2: +10
}

// AppendTo chooses the partition.
func ExampleTxn_AppendTo() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("events", strata.TopicConfig{Partitions: 2}); err != nil {
		panic(err)
	}
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "writer"})
	if err != nil {
		panic(err)
	}
	if err := tx.AppendTo(ctx, "events", 1, strata.Record{Value: []byte("e1")}, strata.Record{Value: []byte("e2")}); err != nil {
		panic(err)
	}
	if err := tx.Commit(ctx); err != nil {
		panic(err)
	}
	for r, err := range s.Scan("events", 1, 0) {
		if err != nil {
			panic(err)
		}
		fmt.Println(r.Offset, string(r.Value))
	}
	// Output:
	// 0 e1
	// 1 e2
}

// Commit makes the records visible; a second Commit is ErrTxnDone.
func ExampleTxn_Commit() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("t", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	if err != nil {
		panic(err)
	}
	if err := tx.AppendTo(ctx, "t", 0, strata.Record{Value: []byte("v")}); err != nil {
		panic(err)
	}
	fmt.Println(tx.Commit(ctx))
	fmt.Println(tx.Commit(ctx))
	// The records and the COMMIT marker after them.
	end, _ := s.ListOffsets("t", 0, strata.Latest)
	fmt.Println("end offset:", end)
	// Output:
	// <nil>
	// strata: transaction already committed or aborted
	// end offset: 2
}

// Abort discards the transaction: records held in memory are never
// written.
func ExampleTxn_Abort() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("t", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	if err != nil {
		panic(err)
	}
	if err := tx.AppendTo(ctx, "t", 0, strata.Record{Value: []byte("never")}); err != nil {
		panic(err)
	}
	fmt.Println(tx.Abort(ctx))
	end, _ := s.ListOffsets("t", 0, strata.Latest)
	fmt.Println("end offset:", end)
	// Output:
	// <nil>
	// end offset: 0
}

// CommitOffsets commits a group's consumed offsets with the transaction's
// records: Kafka's consume-transform-produce.
func ExampleTxn_CommitOffsets() {
	s, done := exampleLog("orders", "order 1", "order 2")
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("invoices", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "invoicer"})
	if err != nil {
		panic(err)
	}
	for r, err := range s.Scan("orders", 0, 0) {
		if err != nil {
			panic(err)
		}
		if err := tx.AppendTo(ctx, "invoices", 0, strata.Record{Value: append([]byte("invoice for "), r.Value...)}); err != nil {
			panic(err)
		}
	}
	orders := strata.TopicPartition{Topic: "orders", Partition: 0}
	if err := tx.CommitOffsets(ctx, "invoicer", map[strata.TopicPartition]int64{orders: 2}); err != nil {
		panic(err)
	}
	_, ok := s.Committed("invoicer", "orders", 0)
	fmt.Println("committed before Commit:", ok)
	if err := tx.Commit(ctx); err != nil {
		panic(err)
	}
	om, _ := s.Committed("invoicer", "orders", 0)
	fmt.Println("committed offset:", om.Offset)
	for r, err := range s.Scan("invoices", 0, 0) {
		if err != nil {
			panic(err)
		}
		fmt.Println(string(r.Value))
	}
	// Output:
	// committed before Commit: false
	// committed offset: 2
	// invoice for order 1
	// invoice for order 2
}

// A relay consumes orders with a Consumer and writes an invoice for each,
// with the consumer's offsets, in one transaction: a consumer evicted
// before Commit (another took its partitions) would fail it with
// ErrFenced, aborting the invoices.
func ExampleTxn_CommitConsumerOffsets() {
	s, done := exampleLog("orders", "order 1", "order 2")
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("invoices", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	c, err := s.Consumer("invoicer", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	msgs, err := c.Poll(ctx)
	if err != nil {
		panic(err)
	}
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "invoicer-1"})
	if err != nil {
		panic(err)
	}
	next := map[strata.TopicPartition]int64{}
	for _, m := range msgs {
		if err := tx.AppendTo(ctx, "invoices", 0, strata.Record{Value: append([]byte("invoice for "), m.Value...)}); err != nil {
			panic(err)
		}
		next[strata.TopicPartition{Topic: m.Topic, Partition: m.Partition}] = m.Offset + 1
	}
	if err := tx.CommitConsumerOffsets(ctx, c, next); err != nil {
		panic(err)
	}
	if err := tx.Commit(ctx); err != nil {
		panic(err)
	}
	om, _ := s.Committed("invoicer", "orders", 0)
	fmt.Println("committed offset:", om.Offset)
	for r, err := range s.Scan("invoices", 0, 0) {
		if err != nil {
			panic(err)
		}
		fmt.Println(string(r.Value))
	}
	// Output:
	// committed offset: 2
	// invoice for order 1
	// invoice for order 2
}
