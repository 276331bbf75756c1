package typed_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/typed"
)

// openExample opens a store in a new temporary directory with a topic of
// three partitions; done closes the store and removes it.
func openExample(topicName string) (s *strata.Store, done func()) {
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

// Purchase is the value type of the typed examples.
type Purchase struct {
	ID    int     `json:"id"`
	Item  string  `json:"item"`
	Price float64 `json:"price"`
}

// Serialize at the producer, deserialize at the consumer: one line each.
func ExampleNewProducer() {
	s, done := openExample("orders")
	defer done()
	ctx := context.Background()

	p := s.Producer(strata.ProducerOptions{})
	defer p.Close()
	orders := typed.NewProducer(p, typed.String(), typed.JSON[Purchase]())

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

	r := typed.NewReader(s, "orders", at.Partition, 0, typed.String(), typed.JSON[Purchase]())
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
func ExampleNewReader() {
	s, done := openExample("orders")
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

	r := typed.NewReader(s, "orders", 1, 0, typed.Bytes(), typed.JSON[Purchase]())
	for range 3 {
		rec, err := r.Next(ctx)
		if errors.Is(err, typed.ErrDecode) {
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
	// typed: cannot decode the value of orders partition 1 offset 1: unexpected end of JSON input
	// 2 jam
}

// The codecs map nil to Kafka's null: a nil key is no key, a nil value a
// tombstone. Use a pointer type with JSON to tell a tombstone from a zero
// value.
func ExampleJSON() {
	c := typed.JSON[*Purchase]()
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
