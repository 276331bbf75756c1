package strata_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stratalog/strata"
)

// Get reads one record by its offset; the record is the caller's to keep.
func ExampleStore_Get() {
	s, done := exampleStore(nil)
	defer done()
	if err := s.CreateTopic("events", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	if _, err := s.AppendTo(context.Background(), "events", 0,
		strata.Record{Key: []byte("a"), Value: []byte("first")},
		strata.Record{Key: []byte("b"), Value: []byte("second")},
	); err != nil {
		panic(err)
	}
	r, err := s.Get("events", 0, 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("offset %d: %s=%s\n", r.Offset, r.Key, r.Value)

	_, err = s.Get("events", 0, 2)
	fmt.Println(errors.Is(err, strata.ErrOffsetOutOfRange))
	// Output:
	// offset 1: b=second
	// true
}

// GetInto reads into a buffer the caller reuses: a lookup of a record
// without headers then allocates nothing. The record is valid until the
// buffer is written again.
func ExampleStore_GetInto() {
	s, done := exampleLog("events", "zero", "one", "two", "three")
	defer done()
	buf := make([]byte, 64<<10)
	for _, off := range []int64{3, 0, 2} {
		r, err := s.GetInto("events", 0, off, buf)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d: %s\n", r.Offset, r.Value)
	}
	// Output:
	// 3: three
	// 0: zero
	// 2: two
}

// Scan reads what a partition holds now and stops at its end offset as of
// the call, where Records would wait for more.
func ExampleStore_Scan() {
	s, done := exampleLog("events", "a", "b", "c")
	defer done()
	for r, err := range s.Scan("events", 0, 1) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d: %s\n", r.Offset, r.Value) // r's bytes are valid in this loop body only
	}
	fmt.Println("done")
	// Output:
	// 1: b
	// 2: c
	// done
}

// EnsureTopic creates a topic the first time a service starts and leaves it
// alone later; a topic that exists with another partition count or cleanup
// policy is an error.
func ExampleStore_EnsureTopic() {
	s, done := exampleStore(nil)
	defer done()
	cfg := strata.TopicConfig{Partitions: 3}
	for range 2 { // two starts
		if err := s.EnsureTopic("orders", cfg); err != nil {
			panic(err)
		}
	}
	err := s.EnsureTopic("orders", strata.TopicConfig{Partitions: 6})
	fmt.Println(errors.Is(err, strata.ErrTopicConfigMismatch))
	fmt.Println(err)
	// Output:
	// true
	// strata: topic "orders" exists with Partitions 3 (wanted 6): topic exists with another config
}

// PartitionFor names the partition Append routes a key to: Kafka's murmur2
// partitioner, as a Kafka producer would pick it for a topic of as many
// partitions.
func ExampleStore_PartitionFor() {
	s, done := exampleStore(nil)
	defer done()
	if err := s.CreateTopic("orders", strata.TopicConfig{Partitions: 10}); err != nil {
		panic(err)
	}
	part, err := s.PartitionFor("orders", []byte("foobar"))
	if err != nil {
		panic(err)
	}
	pos, err := s.Append(context.Background(), "orders", strata.Record{Key: []byte("foobar"), Value: []byte("v")})
	if err != nil {
		panic(err)
	}
	fmt.Println(part, pos[0].Partition)

	_, err = s.PartitionFor("orders", nil)
	fmt.Println(errors.Is(err, strata.ErrNoKey))
	// Output:
	// 6 6
	// true
}

// ListOffsetTime answers as Kafka's ListOffsets does, with the timestamp
// of the record found: AtTime finds the first record, in offset order, at
// or after the time (here one stamped later than it), and MaxTimestamp
// the record with the largest timestamp.
func ExampleStore_ListOffsetTime() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("readings", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	for _, m := range []int{0, 5, 1} { // 09:00, 09:05, 09:01
		r := strata.Record{Value: []byte("r"), Timestamp: exampleTime.Add(time.Duration(m) * time.Minute)}
		if _, err := s.AppendTo(ctx, "readings", 0, r); err != nil {
			panic(err)
		}
	}
	for _, q := range []struct {
		name string
		spec strata.OffsetSpec
	}{
		{"AtTime(09:01)", strata.AtTime(exampleTime.Add(time.Minute))},
		{"MaxTimestamp", strata.MaxTimestamp},
		{"AtTime(09:06)", strata.AtTime(exampleTime.Add(6 * time.Minute))},
	} {
		ot, err := s.ListOffsetTime("readings", 0, q.spec)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-14s offset %2d at %s\n", q.name, ot.Offset, ot.Timestamp.UTC().Format("15:04"))
	}
	// Output:
	// AtTime(09:01)  offset  1 at 09:05
	// MaxTimestamp   offset  1 at 09:05
	// AtTime(09:06)  offset -1 at 00:00
}

// Under ReadCommitted, ListOffsetTime finds only records below the last
// stable offset: the newest records here are in a transaction still open
// (written, as they fill the topic's small batches).
func ExampleView_ListOffsetTime() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("readings", strata.TopicConfig{MaxBatchBytes: 256}); err != nil {
		panic(err)
	}
	if _, err := s.AppendTo(ctx, "readings", 0, strata.Record{Value: []byte("r"), Timestamp: exampleTime}); err != nil {
		panic(err)
	}
	txn, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "loader"})
	if err != nil {
		panic(err)
	}
	defer txn.Abort(ctx)
	for range 3 {
		if err := txn.AppendTo(ctx, "readings", 0, strata.Record{Value: make([]byte, 100), Timestamp: exampleTime.Add(time.Hour)}); err != nil {
			panic(err)
		}
	}
	for _, iso := range []strata.Isolation{strata.ReadUncommitted, strata.ReadCommitted} {
		ot, err := s.View(iso).ListOffsetTime("readings", 0, strata.MaxTimestamp)
		if err != nil {
			panic(err)
		}
		fmt.Println(iso, "offset", ot.Offset, "at", ot.Timestamp.UTC().Format("15:04"))
	}
	// Output:
	// read_uncommitted offset 1 at 10:00
	// read_committed offset 0 at 09:00
}
