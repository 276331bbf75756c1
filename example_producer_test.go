package strata_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stratalog/strata"
)

// openProducerExample opens a store in a new temporary directory with a
// topic of three partitions; done closes the store and removes it.
func openProducerExample(topicName string) (s *strata.Store, done func()) {
	s, done = exampleStore(nil)
	if err := s.CreateTopic(topicName, strata.TopicConfig{Partitions: 3}); err != nil {
		panic(err)
	}
	return s, done
}

// A Producer gathers records into one batch per partition and appends each
// batch with one write, after Linger or when the batch is full. Callbacks
// report where each record landed.
func ExampleStore_Producer() {
	s, done := openProducerExample("clicks")
	defer done()
	ctx := context.Background()

	// Batches of up to 16 KiB (the default) that wait up to a second for
	// more records; Flush sends them sooner.
	p := s.Producer(strata.ProducerOptions{Linger: time.Second})
	defer p.Close()

	users := []string{"ana", "eve", "ana", "ned", "ana"}
	pos := make([]strata.Position, len(users))
	for i, user := range users {
		r := strata.Record{Key: []byte(user), Value: []byte(fmt.Sprintf("click %d", i))}
		err := p.Produce(ctx, "clicks", r, func(at strata.Position, err error) {
			if err != nil {
				panic(err)
			}
			pos[i] = at
		})
		if err != nil {
			panic(err)
		}
	}
	// Flush waits until every record is appended and its callback has run.
	if err := p.Flush(ctx); err != nil {
		panic(err)
	}
	for i, user := range users {
		fmt.Printf("%s: partition %d offset %d\n", user, pos[i].Partition, pos[i].Offset)
	}
	for _, ps := range s.Stats().Topics["clicks"] {
		fmt.Printf("%d records in %d append(s)\n", ps.AppendedRecords, ps.Appends)
	}
	// Output:
	// ana: partition 1 offset 0
	// eve: partition 2 offset 0
	// ana: partition 1 offset 1
	// ned: partition 0 offset 0
	// ana: partition 1 offset 2
	// 1 records in 1 append(s)
	// 3 records in 1 append(s)
	// 1 records in 1 append(s)
}

// Produce fails at once, without calling the callback, for a record that
// can never be appended; after Close it fails with ErrClosed.
func ExampleProducer_Produce_errors() {
	s, done := openProducerExample("clicks")
	defer done()
	ctx := context.Background()
	p := s.Producer(strata.ProducerOptions{})

	err := p.Produce(ctx, "no-such-topic", strata.Record{Value: []byte("v")}, nil)
	fmt.Println(errors.Is(err, strata.ErrUnknownTopic))
	err = p.Produce(ctx, "clicks", strata.Record{Value: make([]byte, 2<<20)}, nil)
	fmt.Println(errors.Is(err, strata.ErrBatchTooLarge))

	if err := p.Close(); err != nil {
		panic(err)
	}
	err = p.Produce(ctx, "clicks", strata.Record{Value: []byte("v")}, nil)
	fmt.Println(errors.Is(err, strata.ErrClosed))
	// Output:
	// true
	// true
	// true
}

// Flush sends every open batch now and waits for their callbacks: a
// checkpoint before the program moves on. Records produced without a
// callback report their first append error here.
func ExampleProducer_Flush() {
	s, done := openProducerExample("clicks")
	defer done()
	ctx := context.Background()
	p := s.Producer(strata.ProducerOptions{Linger: time.Hour}) // only Flush sends
	defer p.Close()

	for i := range 3 {
		if err := p.Produce(ctx, "clicks", strata.Record{Key: []byte("ana"), Value: []byte(fmt.Sprint(i))}, nil); err != nil {
			panic(err)
		}
	}
	end, _ := s.ListOffsets("clicks", 1, strata.Latest)
	fmt.Println("before Flush:", end)
	if err := p.Flush(ctx); err != nil {
		panic(err)
	}
	end, _ = s.ListOffsets("clicks", 1, strata.Latest)
	fmt.Println("after Flush:", end)
	// Output:
	// before Flush: 0
	// after Flush: 3
}

// Close flushes and stops the producer; close it before its Store.
func ExampleProducer_Close() {
	s, done := openProducerExample("clicks")
	defer done()
	p := s.Producer(strata.ProducerOptions{Linger: time.Hour})
	if err := p.Produce(context.Background(), "clicks", strata.Record{Value: []byte("last")}, nil); err != nil {
		panic(err)
	}
	fmt.Println(p.Close())
	st := s.Stats().Topics["clicks"]
	fmt.Println(st[0].AppendedRecords + st[1].AppendedRecords + st[2].AppendedRecords)
	err := p.Produce(context.Background(), "clicks", strata.Record{Value: []byte("late")}, nil)
	fmt.Println(errors.Is(err, strata.ErrClosed))
	// Output:
	// <nil>
	// 1
	// true
}

// ProduceSync is the synchronous append of a Producer: it returns once the
// records are appended, with their Positions. The Producer is idempotent
// (the default), so a batch it had to try again after an I/O error is
// still appended once.
func ExampleProducer_ProduceSync() {
	s, done := openProducerExample("orders")
	defer done()
	ctx := context.Background()
	p := s.Producer(strata.ProducerOptions{})
	defer p.Close()

	pos, err := p.ProduceSync(ctx, "orders",
		strata.Record{Key: []byte("order-1"), Value: []byte("created")},
		strata.Record{Key: []byte("order-1"), Value: []byte("paid")},
		strata.Record{Key: []byte("order-2"), Value: []byte("created")})
	if err != nil {
		panic(err)
	}
	for _, at := range pos {
		fmt.Printf("partition %d offset %d\n", at.Partition, at.Offset)
	}
	// Output:
	// partition 1 offset 0
	// partition 1 offset 1
	// partition 0 offset 0
}
