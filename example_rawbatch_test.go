package strata_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// AppendBatch stores a Kafka client's batch as it came; a retry of an
// idempotent producer's batch is answered with its first offset and writes
// nothing.
func ExampleStore_AppendBatch() {
	s, done := exampleStore(nil)
	defer done()
	if err := s.CreateTopic("events", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	pid, err := s.NewProducerID()
	if err != nil {
		panic(err)
	}
	batch, err := log.EncodeBatch(nil, []strata.Record{{Value: []byte("a")}, {Value: []byte("b")}},
		log.BatchOptions{Now: time.Now().UnixMilli(), Idempotent: true, ProducerID: pid})
	if err != nil {
		panic(err)
	}
	base, dup, err := s.AppendBatch(context.Background(), "events", 0, batch)
	fmt.Println(base, dup, err)
	base, dup, err = s.AppendBatch(context.Background(), "events", 0, batch)
	fmt.Println(base, dup, err)
	_, _, err = s.AppendBatch(context.Background(), "events", 0, batch[:30])
	fmt.Println(errors.Is(err, strata.ErrCorrupt))
	// Output:
	// 0 false <nil>
	// 0 true <nil>
	// true
}

// ReadBatches returns the stored batches, from the one that holds the
// offset asked for; under ReadCommitted, none at or past the last stable
// offset (6 here, where a transaction is still open).
func ExampleView_ReadBatches() {
	s, _, done := examplePayments(nil)
	defer done()
	for _, iso := range []strata.Isolation{strata.ReadUncommitted, strata.ReadCommitted} {
		batches, err := s.View(iso).ReadBatches("payments", 0, 4, 1<<20, nil)
		if err != nil {
			panic(err)
		}
		var bases []int64
		it := log.NewBatchIter(batches)
		for it.Next() {
			bases = append(bases, it.Header().BaseOffset)
		}
		if err := it.Err(); err != nil {
			panic(err)
		}
		fmt.Println(iso, bases)
	}
	// Output:
	// read_uncommitted [4 5 6 7 8]
	// read_committed [4 5]
}

// PinBatches returns the same batches as ReadBatches without copying
// them, with the partition's offsets; they stay valid until Release.
func ExampleView_PinBatches() {
	s, _, done := examplePayments(nil)
	defer done()
	b, err := s.View(strata.ReadCommitted).PinBatches("payments", 0, 4, 1<<20)
	if err != nil {
		panic(err)
	}
	defer b.Release()
	var bases []int64
	for it := log.NewBatchIter(b.Bytes); it.Next(); {
		bases = append(bases, it.Header().BaseOffset)
	}
	fmt.Println(bases, b.StartOffset, b.LastStableOffset, b.HighWatermark)
	// Output:
	// [4 5] 0 6 9
}

// Release lets the segment go once the bytes are written out: a segment
// that retention dropped meanwhile is removed then.
func ExamplePinnedBatches_Release() {
	s, done := exampleStore(nil)
	defer done()
	if err := s.CreateTopic("events", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	if _, err := s.AppendTo(context.Background(), "events", 0, strata.Record{Value: []byte("a")}); err != nil {
		panic(err)
	}
	b, err := s.View(strata.ReadUncommitted).PinBatches("events", 0, 0, 1<<20)
	if err != nil {
		panic(err)
	}
	var w bytes.Buffer
	w.Write(b.Bytes) // a Kafka Fetch response would be written here
	b.Release()
	fmt.Println(w.Len() > 0)
	// Output:
	// true
}

// Wait blocks until a record is readable at the offset.
func ExampleView_Wait() {
	s, done := exampleStore(nil)
	defer done()
	if err := s.CreateTopic("events", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	ctx := context.Background()
	go func() {
		_, _ = s.AppendTo(ctx, "events", 0, strata.Record{Value: []byte("a")})
	}()
	err := s.View(strata.ReadUncommitted).Wait(ctx, "events", 0, 0)
	fmt.Println(err)
	// Output:
	// <nil>
}

// AbortedTxns lists the aborted transactions of an offset range: a
// read_committed reader skips their producers' batches there.
func ExampleStore_AbortedTxns() {
	s, _, done := examplePayments(nil)
	defer done()
	aborted, err := s.AbortedTxns("payments", 0, 0, 9)
	if err != nil {
		panic(err)
	}
	for _, a := range aborted {
		fmt.Printf("[%d, %d)\n", a.FirstOffset, a.LastOffset)
	}
	// Output:
	// [3, 5)
}

// NewProducerID hands out ids that are never handed out again.
func ExampleStore_NewProducerID() {
	s, done := exampleStore(nil)
	defer done()
	a, _ := s.NewProducerID()
	b, _ := s.NewProducerID()
	fmt.Println(a != b)
	// Output:
	// true
}
