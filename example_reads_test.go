package strata_test

import (
	"context"
	"errors"
	"fmt"

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
