package strata_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/stratalog/strata"
)

// openProducerExample opens a store in a new temporary directory with a
// topic of three partitions; done closes the store and removes it.
func openProducerExample(topicName string) (s *strata.Store, done func()) {
	dir, err := os.MkdirTemp("", "strata-example-")
	if err != nil {
		panic(err)
	}
	s, err = strata.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	if err := s.CreateTopic(topicName, strata.TopicConfig{Partitions: 3}); err != nil {
		panic(err)
	}
	return s, func() {
		if err := s.Close(); err != nil {
			panic(err)
		}
		os.RemoveAll(dir)
	}
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

// Purchase is the value type of the typed examples.
type Purchase struct {
	ID    int     `json:"id"`
	Item  string  `json:"item"`
	Price float64 `json:"price"`
}

// Serialize at the producer, deserialize at the consumer: one line each.
func ExampleNewTypedProducer() {
	s, done := openProducerExample("orders")
	defer done()
	ctx := context.Background()

	p := s.Producer(strata.ProducerOptions{})
	defer p.Close()
	orders := strata.NewTypedProducer(p, strata.String(), strata.JSON[Purchase]())

	var at strata.Position
	for i, item := range []string{"tea", "cake", "jam"} {
		// Keyed by customer: one customer's orders stay in order.
		err := orders.Produce(ctx, "orders", "customer-42", Purchase{ID: i + 1, Item: item, Price: 2.5}, func(pos strata.Position, err error) {
			if err != nil {
				panic(err)
			}
			at = pos
		})
		if err != nil {
			panic(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		panic(err)
	}

	r := strata.NewTypedReader(s, "orders", at.Partition, 0, strata.String(), strata.JSON[Purchase]())
	for range 3 {
		rec, err := r.Next(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Printf("offset %d: %s ordered %+v\n", rec.Offset, rec.Key, rec.Value)
	}
	// Output:
	// offset 0: customer-42 ordered {ID:1 Item:tea Price:2.5}
	// offset 1: customer-42 ordered {ID:2 Item:cake Price:2.5}
	// offset 2: customer-42 ordered {ID:3 Item:jam Price:2.5}
}

// A record its codec cannot decode is ErrDecode, naming where it is; the
// reader moves past it.
func ExampleNewTypedReader() {
	s, done := openProducerExample("orders")
	defer done()
	ctx := context.Background()

	_, err := s.AppendTo(ctx, "orders", 1,
		strata.Record{Value: []byte(`{"id":1,"item":"tea"}`)},
		strata.Record{Value: []byte(`{"id":2,`)}, // cut short
		strata.Record{Value: []byte(`{"id":3,"item":"jam"}`)},
	)
	if err != nil {
		panic(err)
	}

	r := strata.NewTypedReader(s, "orders", 1, 0, strata.Bytes(), strata.JSON[Purchase]())
	for range 3 {
		rec, err := r.Next(ctx)
		if errors.Is(err, strata.ErrDecode) {
			fmt.Println(err)
			continue
		}
		if err != nil {
			panic(err)
		}
		fmt.Println(rec.Offset, rec.Value.Item)
	}
	// Output:
	// 0 tea
	// strata: decoding the value of orders partition 1 offset 1: strata: cannot decode record: unexpected end of JSON input
	// 2 jam
}

// The codecs map nil to Kafka's null: a nil key is no key, a nil value a
// tombstone. Use a pointer type with JSON to tell a tombstone from a zero
// value.
func ExampleJSON() {
	c := strata.JSON[*Purchase]()
	b, _ := c.Encode(&Purchase{ID: 7, Item: "tea", Price: 3})
	fmt.Printf("%s\n", b)
	o, _ := c.Decode(b)
	fmt.Printf("%+v\n", *o)

	b, _ = c.Encode(nil)
	fmt.Println(b == nil)
	o, _ = c.Decode(nil)
	fmt.Println(o == nil)
	// Output:
	// {"id":7,"item":"tea","price":3}
	// {ID:7 Item:tea Price:3}
	// true
	// true
}
