// Package typed reads and writes Strata records as Go values: a Codec
// turns a key or value into a record's bytes and back (Kafka's serializer
// and deserializer in one), a Producer encodes through a strata.Producer,
// and a Reader decodes one partition of a strata.Store.
//
//	p := store.Producer(strata.ProducerOptions{})
//	orders := typed.NewProducer(p, typed.String(), typed.JSON[Order]())
//	err := orders.Produce(ctx, "orders", "customer-42", Order{ID: 1}, nil)
//
//	r := typed.NewReader(store, "orders", 0, 0, typed.String(), typed.JSON[Order]())
//	rec, err := r.Next(ctx) // rec.Key is a string, rec.Value an Order
//
// A nil slice is Kafka's null both ways: a key codec that encodes to nil
// makes a record without a key, a value codec that encodes to nil a
// tombstone.
package typed
