package watermill_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stratalog/strata"

	stratawm "github.com/stratalog/strata/watermill"
)

// A publisher and a group subscriber over one store: the message
// published before the group's first subscription is delivered (a fresh
// group starts at the earliest record), and its Ack is the group's commit.
func Example() {
	dir, err := os.MkdirTemp("", "strata-watermill-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	st, err := strata.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	defer st.Close()

	pub, err := stratawm.NewPublisher(st, stratawm.PublisherConfig{}, watermill.NopLogger{})
	if err != nil {
		panic(err)
	}
	defer pub.Close()
	msg := message.NewMessage("1f4c", []byte(`{"order":42}`))
	msg.Metadata.Set("name", "OrderPlaced")
	if err := pub.Publish("orders", msg); err != nil {
		panic(err)
	}

	sub, err := stratawm.NewSubscriber(st, stratawm.SubscriberConfig{ConsumerGroup: "billing"}, watermill.NopLogger{})
	if err != nil {
		panic(err)
	}
	messages, err := sub.Subscribe(context.Background(), "orders")
	if err != nil {
		panic(err)
	}
	got := <-messages
	offset, _ := stratawm.MessagePartitionOffsetFromCtx(got.Context())
	fmt.Printf("%s %s %s at offset %d\n", got.UUID, got.Metadata.Get("name"), got.Payload, offset)
	got.Ack()
	if err := sub.Close(); err != nil { // commits what was acked, leaves the group
		panic(err)
	}

	committed, _ := st.Committed("billing", "orders", 0)
	fmt.Println("billing committed", committed.Offset)
	// Output:
	// 1f4c OrderPlaced {"order":42} at offset 0
	// billing committed 1
}
