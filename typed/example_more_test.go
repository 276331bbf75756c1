package typed_test

import (
	"context"
	"fmt"
	"time"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/typed"
)

// String stores a string's bytes as they are.
func ExampleString() {
	c := typed.String()
	b, _ := c.Encode("customer-42")
	s, _ := c.Decode(b)
	fmt.Printf("%q %q\n", b, s)

	// Output:
	// "customer-42" "customer-42"
}

// Bytes keeps the bytes as they are, nil (no key, or a tombstone) too.
func ExampleBytes() {
	c := typed.Bytes()
	b, _ := c.Encode([]byte{0xca, 0xfe})
	fmt.Printf("%x\n", b)
	b, _ = c.Encode(nil)
	fmt.Println(b == nil)

	// Output:
	// cafe
	// true
}

// Produce encodes the key and the value; the callback has the record's
// position once its batch is appended.
func ExampleProducer_Produce() {
	s, done := openExample("orders")
	defer done()
	ctx := context.Background()
	p := s.Producer(strata.ProducerOptions{})
	orders := typed.NewProducer(p, typed.String(), typed.JSON[Purchase]())

	err := orders.Produce(ctx, "orders", "customer-42", Purchase{ID: 1, Item: "tea", Price: 2.5}, func(pos strata.Position, err error) {
		fmt.Println("offset", pos.Offset, err)
	})
	if err != nil {
		panic(err)
	}
	if err := p.Close(); err != nil { // flushes
		panic(err)
	}

	// Output:
	// offset 0 <nil>
}

// ProduceRecord sets the timestamp and headers too.
func ExampleProducer_ProduceRecord() {
	s, done := openExample("orders")
	defer done()
	ctx := context.Background()
	p := s.Producer(strata.ProducerOptions{})
	orders := typed.NewProducer(p, typed.String(), typed.JSON[Purchase]())

	var at strata.Position
	err := orders.ProduceRecord(ctx, "orders", typed.Record[string, Purchase]{
		Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Key:       "customer-42",
		Value:     Purchase{ID: 1, Item: "tea", Price: 2.5},
		Headers:   []strata.Header{{Key: "source", Value: []byte("web")}},
	}, func(pos strata.Position, err error) { at = pos })
	if err != nil {
		panic(err)
	}
	if err := p.Close(); err != nil {
		panic(err)
	}

	r := typed.NewReader(s, "orders", at.Partition, at.Offset, typed.String(), typed.JSON[Purchase]())
	rec, err := r.Next(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(rec.Timestamp.UTC(), rec.Key, rec.Value.Item, rec.Headers[0].Key, string(rec.Headers[0].Value))

	// Output:
	// 2026-01-02 03:04:05 +0000 UTC customer-42 tea source web
}

// appendNames appends one record per name to partition 0 of topic.
func appendNames(s *strata.Store, topic string, names ...string) {
	recs := make([]strata.Record, len(names))
	for i, n := range names {
		recs[i] = strata.Record{Value: []byte(n)}
	}
	if _, err := s.AppendTo(context.Background(), topic, 0, recs...); err != nil {
		panic(err)
	}
}

// Next returns the records one by one, decoded; at the end of the
// partition it waits for the next, until ctx ends.
func ExampleReader_Next() {
	s, done := openExample("names")
	defer done()
	appendNames(s, "names", "ada", "grace")

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	r := typed.NewReader(s, "names", 0, 0, typed.Bytes(), typed.String())
	for {
		rec, err := r.Next(ctx)
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(rec.Offset, rec.Value)
	}

	// Output:
	// 0 ada
	// 1 grace
	// context deadline exceeded
}

// All ranges over the records as Next returns them; break leaves the
// loop.
func ExampleReader_All() {
	s, done := openExample("names")
	defer done()
	appendNames(s, "names", "ada", "grace", "edsger")

	r := typed.NewReader(s, "names", 0, 0, typed.Bytes(), typed.String())
	for rec, err := range r.All(context.Background()) {
		if err != nil {
			panic(err)
		}
		fmt.Println(rec.Offset, rec.Value)
		if rec.Offset == 2 {
			break
		}
	}

	// Output:
	// 0 ada
	// 1 grace
	// 2 edsger
}

// Offset is where the reader goes on from: keep it to resume later.
func ExampleReader_Offset() {
	s, done := openExample("names")
	defer done()
	appendNames(s, "names", "ada", "grace")

	r := typed.NewReader(s, "names", 0, 0, typed.Bytes(), typed.String())
	fmt.Println(r.Offset())
	if _, err := r.Next(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(r.Offset())

	// Output:
	// 0
	// 1
}

// SetOffset moves the reader, back or ahead.
func ExampleReader_SetOffset() {
	s, done := openExample("names")
	defer done()
	appendNames(s, "names", "ada", "grace", "edsger")

	ctx := context.Background()
	r := typed.NewReader(s, "names", 0, 0, typed.Bytes(), typed.String())
	r.SetOffset(2)
	rec, _ := r.Next(ctx)
	fmt.Println(rec.Value)
	r.SetOffset(0)
	rec, _ = r.Next(ctx)
	fmt.Println(rec.Value)

	// Output:
	// edsger
	// ada
}
