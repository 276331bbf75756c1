package strata_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// txnBatch encodes values as a transactional batch of p from sequence seq,
// as a Kafka client sends one.
func txnBatch(p strata.TxnProducer, seq int32, values ...string) []byte {
	recs := make([]strata.Record, len(values))
	for i, v := range values {
		recs[i] = strata.Record{Value: []byte(v)}
	}
	b, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: time.Now().UnixMilli(), Idempotent: true, Transactional: true,
		ProducerID: p.ProducerID, ProducerEpoch: p.Epoch, BaseSequence: seq})
	if err != nil {
		panic(err)
	}
	return b
}

// printCommitted prints what a ReadCommitted reader sees of a topic's
// partition 0.
func printCommitted(s *strata.Store, topic string) {
	var vs []string
	for r, err := range s.View(strata.ReadCommitted).Scan(topic, 0, 0) {
		if err != nil {
			panic(err)
		}
		vs = append(vs, string(r.Value))
	}
	fmt.Println(topic, vs)
}

// A producer outside the store, as a Kafka client's InitProducerId starts
// one: the id's producer id at a new epoch, which fences the one before.
func ExampleStore_InitTxnProducer() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay"})
	if err != nil {
		panic(err)
	}
	again, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay"})
	if err != nil {
		panic(err)
	}
	fmt.Println(again.ProducerID == p.ProducerID, p.Epoch, again.Epoch)
	err = s.AddTxnPartitions(ctx, p)
	fmt.Println(errors.Is(err, strata.ErrProducerFenced))
	// Output:
	// true 0 1
	// true
}

// A partition is added to the transaction before its batches: one not
// added is refused.
func ExampleStore_AddTxnPartitions() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("out", strata.TopicConfig{Partitions: 2}); err != nil {
		panic(err)
	}
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay"})
	if err != nil {
		panic(err)
	}
	if err := s.AddTxnPartitions(ctx, p, strata.TopicPartition{Topic: "out", Partition: 0}); err != nil {
		panic(err)
	}
	_, _, err = s.AppendTxnBatch(ctx, p, "out", 1, txnBatch(p, 0, "x"))
	fmt.Println(errors.Is(err, strata.ErrInvalidTxnState))
	err = s.AddTxnPartitions(ctx, p, strata.TopicPartition{Topic: "missing"})
	fmt.Println(errors.Is(err, strata.ErrUnknownTopic))
	// Output:
	// true
	// true
}

// A client's transactional batches are stored as they came, and visible
// under ReadCommitted once EndTxn commits them.
func ExampleStore_AppendTxnBatch() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("out", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay"})
	if err != nil {
		panic(err)
	}
	if err := s.AddTxnPartitions(ctx, p, strata.TopicPartition{Topic: "out"}); err != nil {
		panic(err)
	}
	base, dup, err := s.AppendTxnBatch(ctx, p, "out", 0, txnBatch(p, 0, "a", "b"))
	fmt.Println(base, dup, err)
	printCommitted(s, "out")
	if err := s.EndTxn(ctx, p, true); err != nil {
		panic(err)
	}
	printCommitted(s, "out")
	// Output:
	// 0 false <nil>
	// out []
	// out [a b]
}

// A group's offsets, committed with the transaction's records.
func ExampleStore_CommitTxnOffsets() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	for _, name := range []string{"in", "out"} {
		if err := s.CreateTopic(name, strata.TopicConfig{}); err != nil {
			panic(err)
		}
	}
	if _, err := s.AppendTo(ctx, "in", 0, strata.Record{Value: []byte("order")}); err != nil {
		panic(err)
	}
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay"})
	if err != nil {
		panic(err)
	}
	if err := s.AddTxnPartitions(ctx, p, strata.TopicPartition{Topic: "out"}); err != nil {
		panic(err)
	}
	if _, _, err := s.AppendTxnBatch(ctx, p, "out", 0, txnBatch(p, 0, "shipment")); err != nil {
		panic(err)
	}
	in := strata.TopicPartition{Topic: "in"}
	err = s.CommitTxnOffsets(ctx, p, "relays", map[strata.TopicPartition]strata.OffsetAndMetadata{in: {Offset: 1, Metadata: "m"}})
	if err != nil {
		panic(err)
	}
	_, ok := s.Committed("relays", "in", 0)
	fmt.Println(ok)
	if err := s.EndTxn(ctx, p, true); err != nil {
		panic(err)
	}
	om, _ := s.Committed("relays", "in", 0)
	fmt.Println(om.Offset, om.Metadata)
	// Output:
	// false
	// 1 m
}

// PendingTxnOffset tells a reader that a transaction holds an offset of
// the group, not yet committed: it waits for the transaction's end before
// it starts from the group's offset.
func ExampleStore_PendingTxnOffset() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("in", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	if _, err := s.AppendTo(ctx, "in", 0, strata.Record{Value: []byte("order")}); err != nil {
		panic(err)
	}
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay"})
	if err != nil {
		panic(err)
	}
	if err := s.AddTxnPartitions(ctx, p); err != nil { // opens the transaction, for its offsets
		panic(err)
	}
	in := strata.TopicPartition{Topic: "in"}
	err = s.CommitTxnOffsets(ctx, p, "relays", map[strata.TopicPartition]strata.OffsetAndMetadata{in: {Offset: 1}})
	if err != nil {
		panic(err)
	}
	_, ok := s.Committed("relays", "in", 0)
	fmt.Println(s.PendingTxnOffset("relays", "in", 0), ok)
	if err := s.EndTxn(ctx, p, false); err != nil {
		panic(err)
	}
	_, ok = s.Committed("relays", "in", 0)
	fmt.Println(s.PendingTxnOffset("relays", "in", 0), ok)
	// Output:
	// true false
	// false false
}

// EndTxn aborts too; the producer keeps its epoch for its next
// transaction, and a retry of the last EndTxn is answered as done.
func ExampleStore_EndTxn() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("out", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay"})
	if err != nil {
		panic(err)
	}
	seq := int32(0)
	for i, commit := range []bool{false, true} {
		if err := s.AddTxnPartitions(ctx, p, strata.TopicPartition{Topic: "out"}); err != nil {
			panic(err)
		}
		if _, _, err := s.AppendTxnBatch(ctx, p, "out", 0, txnBatch(p, seq, fmt.Sprint("txn ", i))); err != nil {
			panic(err)
		}
		seq++
		if err := s.EndTxn(ctx, p, commit); err != nil {
			panic(err)
		}
	}
	fmt.Println(s.EndTxn(ctx, p, true))
	fmt.Println(errors.Is(s.EndTxn(ctx, p, false), strata.ErrInvalidTxnState))
	printCommitted(s, "out")
	// Output:
	// <nil>
	// true
	// out [txn 1]
}

// Transactions lists the transactional ids and their states: here one
// whose transaction is open in a partition, and one that committed.
func ExampleStore_Transactions() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("out", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "billing"})
	if err != nil {
		panic(err)
	}
	if err := tx.AppendTo(ctx, "out", 0, strata.Record{Value: []byte("invoice")}); err != nil {
		panic(err)
	}
	if err := tx.Commit(ctx); err != nil {
		panic(err)
	}
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay"})
	if err != nil {
		panic(err)
	}
	if err := s.AddTxnPartitions(ctx, p, strata.TopicPartition{Topic: "out"}); err != nil {
		panic(err)
	}
	states, err := s.Transactions(ctx)
	if err != nil {
		panic(err)
	}
	for _, st := range states {
		fmt.Println(st.ID, st.State, st.Partitions, st.Start.IsZero())
	}
	// Output:
	// billing CompleteCommit [] true
	// relay Ongoing [out-0] false
}
