// Command service is an event-driven service on Watermill's router over a
// Strata store: a handler reserves stock for each placed order and emits
// an event, which a second handler turns into a notification. A warehouse
// call that fails once is retried (Watermill's Retry middleware); an
// order that can never be handled goes to a poison queue (the PoisonQueue
// middleware) instead of blocking its partition, and a third handler
// reports it. Every message is in the store's topics, and every handler's
// position is its consumer group's commits: run it again on the same
// directory and nothing is handled twice.
//
//	go run ./examples/service [dir]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/stratalog/strata"

	stratawm "github.com/stratalog/strata/watermill"
)

// OrderPlaced is the command the service handles.
type OrderPlaced struct {
	ID   string `json:"id"`
	Item string `json:"item"`
	Qty  int    `json:"qty"`
}

// StockReserved is the event it emits.
type StockReserved struct {
	OrderID string `json:"order_id"`
	Item    string `json:"item"`
	Left    int    `json:"left"`
}

func main() {
	dir := ""
	if len(os.Args) > 1 {
		dir = os.Args[1]
	} else {
		tmp, err := os.MkdirTemp("", "strata-watermill-service-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "service:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	if err := runService(context.Background(), dir, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "service:", err)
		os.Exit(1)
	}
}

// warehouse is the stock the service reserves from. Its first call for
// order "o-2" fails, as a call over a network sometimes does.
type warehouse struct {
	mu       sync.Mutex
	stock    map[string]int
	failed   bool
	attempts map[string]int // calls per order
}

var errTimeout = errors.New("warehouse: timeout")

func (w *warehouse) reserve(o OrderPlaced) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.attempts[o.ID]++
	if o.ID == "o-2" && !w.failed {
		w.failed = true
		return 0, errTimeout
	}
	left, ok := w.stock[o.Item]
	if !ok {
		return 0, fmt.Errorf("warehouse: no such item %q", o.Item)
	}
	if left < o.Qty {
		return 0, fmt.Errorf("warehouse: %d %s wanted, %d left", o.Qty, o.Item, left)
	}
	w.stock[o.Item] = left - o.Qty
	return left - o.Qty, nil
}

// groups are the example's consumer groups and the topics they read.
var groups = []groupTopic{{"stock", "orders"}, {"notify", "stock.reserved"}, {"alerts", "orders.poison"}}

type groupTopic struct{ group, topic string }

// caughtUp reports whether every group of gs has committed every record of
// its topic.
func caughtUp(ctx context.Context, st *strata.Store, gs []groupTopic) bool {
	for _, g := range gs {
		lags, err := st.Lag(ctx, g.group, g.topic)
		if err != nil {
			return false
		}
		for _, p := range lags {
			if p.Lag != 0 {
				return false
			}
		}
	}
	return true
}

// runService places four orders, runs the router until each one is either
// notified or in the poison queue, and writes what happened to out.
func runService(ctx context.Context, dir string, out io.Writer) error {
	st, err := strata.Open(dir, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	logger := watermill.NopLogger{}

	pub, err := stratawm.NewPublisher(st, stratawm.PublisherConfig{
		// An order's messages keep their partition, and their order.
		Marshaler: stratawm.NewWithPartitioningMarshaler(func(_ string, msg *message.Message) (string, error) {
			return msg.Metadata.Get("order_id"), nil
		}),
		Topic: strata.TopicConfig{Partitions: 3},
	}, logger)
	if err != nil {
		return err
	}
	defer pub.Close()
	subscriber := func(group string) (*stratawm.Subscriber, error) {
		return stratawm.NewSubscriber(st, stratawm.SubscriberConfig{
			ConsumerGroup: group,
			Topic:         strata.TopicConfig{Partitions: 3},
		}, logger)
	}

	orders := []OrderPlaced{
		{ID: "o-1", Item: "kettle", Qty: 1},
		{ID: "o-2", Item: "kettle", Qty: 2},
		{ID: "o-3", Item: "unicorn", Qty: 1},
		{ID: "o-4", Item: "toaster", Qty: 1},
	}
	for _, o := range orders {
		payload, err := json.Marshal(o)
		if err != nil {
			return err
		}
		msg := message.NewMessage(watermill.NewUUID(), payload)
		msg.Metadata.Set("order_id", o.ID)
		if err := pub.Publish("orders", msg); err != nil {
			return err
		}
	}

	router, err := message.NewRouter(message.RouterConfig{}, logger)
	if err != nil {
		return err
	}
	poison, err := middleware.PoisonQueue(pub, "orders.poison")
	if err != nil {
		return err
	}
	var mu sync.Mutex // guards notified and poisoned
	var notified, poisoned []string
	router.AddMiddleware(
		// Outermost first: a message the retries could not get through
		// goes to the poison queue, and its partition moves on.
		poison,
		middleware.Retry{
			MaxRetries:      2,
			InitialInterval: 10 * time.Millisecond,
			Logger:          logger,
		}.Middleware,
	)

	wh := &warehouse{stock: map[string]int{"kettle": 5, "toaster": 1}, attempts: map[string]int{}}
	stockSub, err := subscriber("stock")
	if err != nil {
		return err
	}
	router.AddHandler("reserve-stock", "orders", stockSub, "stock.reserved", pub,
		func(msg *message.Message) ([]*message.Message, error) {
			var o OrderPlaced
			if err := json.Unmarshal(msg.Payload, &o); err != nil {
				return nil, err
			}
			left, err := wh.reserve(o)
			if err != nil {
				return nil, err
			}
			payload, err := json.Marshal(StockReserved{OrderID: o.ID, Item: o.Item, Left: left})
			if err != nil {
				return nil, err
			}
			event := message.NewMessage(watermill.NewUUID(), payload)
			event.Metadata.Set("order_id", o.ID)
			return []*message.Message{event}, nil
		})

	done := make(chan struct{})
	settled := func() {
		if len(notified)+len(poisoned) == len(orders) {
			close(done)
		}
	}
	notifySub, err := subscriber("notify")
	if err != nil {
		return err
	}
	router.AddConsumerHandler("notify", "stock.reserved", notifySub, func(msg *message.Message) error {
		var e StockReserved
		if err := json.Unmarshal(msg.Payload, &e); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		notified = append(notified, fmt.Sprintf("%s: %s reserved, %d left", e.OrderID, e.Item, e.Left))
		settled()
		return nil
	})
	alertSub, err := subscriber("alerts")
	if err != nil {
		return err
	}
	router.AddConsumerHandler("poison-alert", "orders.poison", alertSub, func(msg *message.Message) error {
		mu.Lock()
		defer mu.Unlock()
		poisoned = append(poisoned, fmt.Sprintf("%s: %s (from %s, handler %s)",
			msg.Metadata.Get("order_id"), msg.Metadata.Get(middleware.ReasonForPoisonedKey),
			msg.Metadata.Get(middleware.PoisonedTopicKey), msg.Metadata.Get(middleware.PoisonedHandlerKey)))
		settled()
		return nil
	})

	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- router.Run(ctx) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	// The last handler has run, but its message is acked, and its offset
	// committed, only once it returns: wait for the commits before closing
	// the router, which would leave an unacked message for the next run.
	for ctx.Err() == nil && !caughtUp(ctx, st, groups) {
		time.Sleep(time.Millisecond)
	}
	if err := router.Close(); err != nil {
		return err
	}
	if err := <-ran; err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("the orders were not all handled: %w", ctx.Err())
	}

	// The notifications of one order come in order; those of different
	// orders may interleave (they are on different partitions).
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(notified)
	for _, n := range notified {
		fmt.Fprintln(out, "notified", n)
	}
	for _, p := range poisoned {
		fmt.Fprintln(out, "poisoned", p)
	}
	fmt.Fprint(out, "warehouse calls:")
	for _, o := range orders {
		fmt.Fprintf(out, " %s %d", o.ID, wh.attempts[o.ID])
	}
	fmt.Fprintln(out)
	for _, g := range groups {
		lags, err := st.Lag(ctx, g.group, g.topic)
		if err != nil {
			return err
		}
		var end, lag int64
		for _, p := range lags {
			end += p.EndOffset
			lag += p.Lag
		}
		fmt.Fprintf(out, "group %s on %s: end %d, lag %d\n", g.group, g.topic, end, lag)
	}
	return nil
}
