// Command consumergroup shows Kafka's consumer groups in Strata. Workers of
// one group share the six partitions of an orders topic; the partitions
// move as workers join, leave and crash; each worker commits what it has
// processed (at least once), and an idempotent handler, which deduplicates
// by the event id each record carries in a header, applies a redelivered
// event once. A second group then replays the topic from the start.
//
// The workers take turns from one goroutine, and the store runs on a clock
// the example moves by hand (session timeouts included), so the output is
// the same on every run; only an empty Poll waits, a few milliseconds of
// real time.
//
//	go run ./examples/consumergroup
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/stratalog/strata"
)

const (
	topicName      = "orders"
	partitions     = 6
	billingGroup   = "billing"
	auditGroup     = "audit"
	sessionTimeout = 30 * time.Second
)

// clock is a clock moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// orders are the ids of the orders, the records' keys: two for each
// partition, as Kafka's murmur2 partitioner places them.
var orders = []string{
	"order-1001", "order-1002", "order-1003", "order-1004", "order-1005", "order-1006",
	"order-1008", "order-1009", "order-1013", "order-1015", "order-1020", "order-1021",
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumergroup:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "strata-consumergroup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	clk := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	s, err := strata.Open(dir, &strata.Options{
		Now:                    clk.Now,
		Sync:                   strata.SyncNever,
		SessionTimeout:         sessionTimeout,
		Assignor:               strata.StickyAssignor(), // when members come and go, move only what must move
		RetentionCheckInterval: -1,
	})
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }() // a no-op once closed at the end
	ledger := NewLedger()
	app := &appender{s: s, clk: clk}

	heading("1. A topic of orders in 6 partitions, keyed by order id")
	if err := s.CreateTopic(topicName, strata.TopicConfig{Partitions: partitions}); err != nil {
		return err
	}
	for _, typ := range []string{"created", "paid"} {
		for _, id := range orders {
			if err := app.append(ctx, id, typ); err != nil {
				return err
			}
		}
	}
	byPart := map[int][]string{}
	for _, id := range orders {
		p, err := s.PartitionFor(topicName, []byte(id))
		if err != nil {
			return err
		}
		byPart[p] = append(byPart[p], id)
	}
	for p := range partitions {
		end, err := s.ListOffsets(topicName, p, strata.Latest)
		if err != nil {
			return err
		}
		fmt.Printf("%s-%d: %d events of %s\n", topicName, p, end, strings.Join(byPart[p], " "))
	}

	heading("2. Three workers of group billing share the partitions")
	var workers []*Worker
	for _, name := range []string{"worker-1", "worker-2", "worker-3"} {
		w, err := NewWorker(s, name, ledger)
		if err != nil {
			return err
		}
		workers = append(workers, w)
	}
	w1, w2, w3 := workers[0], workers[1], workers[2]
	fmt.Println("they poll in turn; each commits after every second poll:")
	if err := round(ctx, w1, w2, w3); err != nil {
		return err
	}
	printAssignments(w1, w2, w3)
	for range 2 {
		if err := round(ctx, w1, w2, w3); err != nil {
			return err
		}
	}
	fmt.Println("(the third polls are processed but not committed yet)")
	if err := printLag(ctx, s, clk, billingGroup); err != nil {
		return err
	}

	heading("3. A fourth worker joins: one partition moves, revoked before it is reassigned")
	w4, err := NewWorker(s, "worker-4", ledger)
	if err != nil {
		return err
	}
	if err := round(ctx, w1, w2, w3, w4); err != nil {
		return err
	}
	printAssignments(w1, w2, w3, w4)

	heading("4. worker-2 leaves: its partitions go to the others")
	if err := w2.Close(); err != nil {
		return err
	}
	if err := round(ctx, w1, w3, w4); err != nil {
		return err
	}
	printAssignments(w1, w3, w4)

	heading("5. The orders ship; worker-4 crashes before it commits")
	for _, id := range orders {
		if err := app.append(ctx, id, "shipped"); err != nil {
			return err
		}
	}
	if err := round(ctx, w1, w3); err != nil {
		return err
	}
	crashed := w4.c.Assignment()
	if _, err := w4.process(ctx); err != nil {
		return err
	}
	fmt.Println("worker-4 crashes here: it applied those events but will never commit or poll again")
	if err := printLag(ctx, s, clk, billingGroup); err != nil {
		return err
	}
	fmt.Printf("\nthe clock moves on in steps of 20 s; the live workers keep polling (their heartbeat);\n")
	fmt.Printf("after the session timeout (%s) the group evicts worker-4 and hands its partitions out:\n", sessionTimeout)
	for range 2 {
		clk.Add(20 * time.Second)
		fmt.Printf("[%s]\n", clk.Now().Format("15:04:05"))
		if err := round(ctx, w1, w3); err != nil {
			return err
		}
	}
	printAssignments(w1, w3)
	zombie := map[strata.TopicPartition]int64{crashed[0]: 0}
	if err := w4.c.CommitOffsets(ctx, zombie); errors.Is(err, strata.ErrFenced) {
		fmt.Println("worker-4, were it to come back and commit: ErrFenced (evicted members cannot commit)")
	} else {
		return fmt.Errorf("worker-4's commit after eviction: got %v, want ErrFenced", err)
	}

	heading("6. The workers close: OnRevoked commits what they processed")
	for _, w := range []*Worker{w1, w3} {
		if err := w.Close(); err != nil {
			return err
		}
	}
	if err := printLag(ctx, s, clk, billingGroup); err != nil {
		return err
	}
	fmt.Println("ledger:", ledger)

	heading("7. A second group replays the topic from the start")
	if err := replay(ctx, s, ledger); err != nil {
		return err
	}
	return s.Close()
}

// appender appends order events, one second of clock time apart, each with
// an event id in a header.
type appender struct {
	s   *strata.Store
	clk *clock
	n   int
}

func (a *appender) append(ctx context.Context, order, typ string) error {
	a.n++
	e := Event{Order: order, Type: typ}
	if typ == "paid" {
		e.Amount = 1000 + a.n*737%9000
	}
	value, err := json.Marshal(e)
	if err != nil {
		return err
	}
	a.clk.Add(time.Second)
	_, err = a.s.Append(ctx, topicName, strata.Record{
		Key:     []byte(order),
		Value:   value,
		Headers: []strata.Header{{Key: eventIDHeader, Value: fmt.Appendf(nil, "ev-%02d", a.n)}},
	})
	return err
}

// round has each worker poll once, in turn.
func round(ctx context.Context, ws ...*Worker) error {
	for _, w := range ws {
		if err := w.Poll(ctx); err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
	}
	return nil
}

func printAssignments(ws ...*Worker) {
	fmt.Println("assignments:")
	for _, w := range ws {
		fmt.Printf("  %s (%s): %s\n", w.name, w.c.MemberID(), names(w.c.Assignment()))
	}
}

// printLag prints Store.Lag: per partition, the end offset, the group's
// committed offset and how far behind it is.
func printLag(ctx context.Context, s *strata.Store, clk *clock, groupName string) error {
	lags, err := s.Lag(ctx, groupName, topicName)
	if err != nil {
		return err
	}
	fmt.Printf("lag of group %s:\n", groupName)
	fmt.Println("  partition  end  committed  lag  oldest unconsumed")
	for _, l := range lags {
		committed, oldest := "-", "-"
		if l.Committed >= 0 {
			committed = fmt.Sprint(l.Committed)
		}
		if l.Lag > 0 {
			oldest = fmt.Sprintf("%s ago", clk.Now().Sub(l.OldestUnconsumed))
		}
		fmt.Printf("  %9d  %3d  %9s  %3d  %s\n", l.Partition, l.EndOffset, committed, l.Lag, oldest)
	}
	return nil
}

// replay reads the whole topic in a new group, which has no committed
// offsets and so starts at the earliest offset, and checks its totals
// against the ledger's.
func replay(ctx context.Context, s *strata.Store, ledger *Ledger) error {
	c, err := s.Consumer(auditGroup, []string{topicName}, strata.ConsumerOptions{
		AutoOffsetReset: strata.ResetEarliest,
	})
	if err != nil {
		return err
	}
	defer c.Close()
	total := int64(0)
	for p := range partitions {
		end, err := s.ListOffsets(topicName, p, strata.Latest)
		if err != nil {
			return err
		}
		total += end
	}
	counts := map[string]int{}
	paid, seen := 0, 0
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a bound, should anything go wrong
	defer cancel()
	for int64(seen) < total {
		msgs, err := c.Poll(ctx)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			var e Event
			if err := json.Unmarshal(m.Value, &e); err != nil {
				return err
			}
			counts[e.Type]++
			paid += e.Amount
			seen++
		}
	}
	if err := c.Commit(ctx); err != nil {
		return err
	}
	fmt.Printf("group %s read %d events: %d created, %d paid, %d shipped; %s paid\n",
		auditGroup, seen, counts["created"], counts["paid"], counts["shipped"], money(paid))
	if seen != len(ledger.applied) || paid != ledger.paidCents {
		return fmt.Errorf("the replay (%d events, %s) disagrees with the ledger (%s)", seen, money(paid), ledger)
	}
	fmt.Println("the same as the ledger, which applied each event once")
	fmt.Printf("Store.Groups(): %s\n", strings.Join(s.Groups(), ", "))
	return nil
}

func heading(s string) {
	fmt.Printf("\n== %s\n", s)
}
