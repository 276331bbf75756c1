package broker_test

import (
	"context"
	"fmt"
	"os"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// Start serves a store to Kafka clients; here franz-go's produces a record
// and reads it back.
func ExampleStart() {
	dir, err := os.MkdirTemp("", "strata-broker-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store, err := strata.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	if err := store.CreateTopic("greetings", strata.TopicConfig{}); err != nil {
		panic(err)
	}

	srv, err := broker.Start(store, &broker.Options{Addr: "127.0.0.1:0"}) // a free port
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()),
		kgo.ConsumeTopics("greetings"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "greetings", Value: []byte("hello")}).FirstErr(); err != nil {
		panic(err)
	}
	fs := cl.PollFetches(ctx)
	if err := fs.Err(); err != nil {
		panic(err)
	}
	r := fs.Records()[0]
	fmt.Printf("%s-%d@%d: %s\n", r.Topic, r.Partition, r.Offset, r.Value)

	got, err := store.Get("greetings", 0, 0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("in the store: %s\n", got.Value)
	// Output:
	// greetings-0@0: hello
	// in the store: hello
}
