package broker_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// SASL makes clients authenticate; here franz-go's SCRAM-SHA-512 client
// produces as alice, and a wrong password is refused.
func ExampleSASL() {
	dir, err := os.MkdirTemp("", "strata-broker-sasl-example-")
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

	srv, err := broker.Start(store, &broker.Options{
		Addr: "127.0.0.1:0",
		SASL: &broker.SASL{Users: map[string]string{"alice": "alice-secret"}},
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	ctx := context.Background()
	client := func(pass string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()),
			kgo.SASL(scram.Auth{User: "alice", Pass: pass}.AsSha512Mechanism()))
		if err != nil {
			panic(err)
		}
		return cl
	}
	cl := client("alice-secret")
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "greetings", Value: []byte("hello")}).FirstErr(); err != nil {
		panic(err)
	}
	got, err := store.Get("greetings", 0, 0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("alice wrote: %s\n", got.Value)

	wrong := client("wrong")
	defer wrong.Close()
	err = wrong.Ping(ctx)
	fmt.Println("a wrong password:", errors.Is(err, kerr.SaslAuthenticationFailed))
	// Output:
	// alice wrote: hello
	// a wrong password: true
}
