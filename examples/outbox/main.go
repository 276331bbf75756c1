// Command outbox shows a transactional outbox relay, Kafka's
// consume-transform-produce loop: it consumes orders and, for each poll,
// in one transaction, writes a shipment per order to one topic and an
// email per order to another and commits the orders' offsets, so that
// whatever a crash interrupts, the shipments, the emails and the group's
// committed offset agree: under ReadCommitted every order is relayed once.
//
// The store is on an in-memory file system (vfs.NewMem) whose Crash keeps
// only what was fsynced, as a power cut would. The relay dies twice: once
// just after a commit is decided (its PrepareCommit is durable, its
// markers are not all written), which the next Open completes; once just
// before a commit is decided, which the next Open aborts, so that the
// relay, restarted from the committed offset, does that work again.
//
//	go run ./examples/outbox
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

const (
	ordersTopic    = "orders"
	shipmentsTopic = "shipments"
	emailsTopic    = "emails"
	group          = "relay"
	txnID          = "orders-relay"
)

var orders = []string{"alice:book", "bob:lamp", "carol:desk", "dave:pen", "erin:mug", "frank:rug"}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "outbox:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	fsys := vfs.NewMem()
	s, err := open(fsys)
	if err != nil {
		return err
	}
	for name, parts := range map[string]int{ordersTopic: 1, shipmentsTopic: 2, emailsTopic: 1} {
		if err := s.CreateTopic(name, strata.TopicConfig{Partitions: parts}); err != nil {
			return err
		}
	}
	for _, o := range orders {
		customer, _, _ := strings.Cut(o, ":")
		if _, err := s.Append(ctx, ordersTopic, strata.Record{Key: []byte(customer), Value: []byte(o)}); err != nil {
			return err
		}
	}

	// The machine dies once the second commit is decided: every file
	// operation fails after the second fsync of __transaction_state.
	fsys.SetInjector(dieAfterSyncs(2))
	err = relay(ctx, s)
	fmt.Println("relay stopped:", short(err))
	if fsys, s, err = crash(fsys, s); err != nil {
		return err
	}
	if err := show(ctx, s, "after the crash after the decision"); err != nil {
		return err
	}

	// Now it dies before the next commit is decided: at the first fsync of
	// __transaction_state, the PrepareCommit's.
	fsys.SetInjector(dieAfterSyncs(0))
	err = relay(ctx, s)
	fmt.Println("relay stopped:", short(err))
	if _, s, err = crash(fsys, s); err != nil {
		return err
	}
	if err := show(ctx, s, "after the crash before the decision"); err != nil {
		return err
	}

	if err := relay(ctx, s); err != nil {
		return err
	}
	if err := show(ctx, s, "after the relay caught up"); err != nil {
		return err
	}
	return s.Close()
}

// open opens the store on fsys: every write fsynced, every read
// ReadCommitted.
func open(fsys vfs.FS) (*strata.Store, error) {
	return strata.Open("shop", &strata.Options{
		FS: fsys, Sync: strata.SyncAlways, Isolation: strata.ReadCommitted,
		Logger: slog.New(slog.DiscardHandler),
	})
}

// relay relays the orders not committed yet, two per transaction, until
// every order is relayed or a call fails.
func relay(ctx context.Context, s *strata.Store) error {
	c, err := s.Consumer(group, []string{ordersTopic}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest, MaxPollRecords: 2})
	if err != nil {
		return err
	}
	defer c.Close()
	for {
		if om, ok := s.Committed(group, ordersTopic, 0); ok && om.Offset == int64(len(orders)) {
			return nil
		}
		msgs, err := c.Poll(ctx)
		if err != nil {
			return err
		}
		tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: txnID})
		if err != nil {
			return err
		}
		next := map[strata.TopicPartition]int64{}
		for _, m := range msgs {
			customer, item, _ := strings.Cut(string(m.Value), ":")
			err := errors.Join(
				tx.Append(ctx, shipmentsTopic, strata.Record{Key: m.Key, Value: []byte("ship " + item + " to " + customer)}),
				tx.Append(ctx, emailsTopic, strata.Record{Key: m.Key, Value: []byte("dear " + customer + ", your " + item + " is on its way")}))
			if err != nil {
				return err
			}
			next[strata.TopicPartition{Topic: m.Topic, Partition: m.Partition}] = m.Offset + 1
		}
		// With the consumer's generation: should it be evicted before
		// Commit, Commit fails with ErrFenced and aborts.
		if err := tx.CommitConsumerOffsets(ctx, c, next); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
	}
}

// crash stops the machine: what was not fsynced is lost, and the dead
// store is abandoned (closed only to stop its goroutines; its files fail).
// It opens the store again on what the crash kept.
func crash(fsys *vfs.Mem, s *strata.Store) (*vfs.Mem, *strata.Store, error) {
	after := fsys.Crash()
	_ = s.Close()
	s, err := open(after)
	return after, s, err
}

// show prints what ReadCommitted readers see: the shipments and emails,
// and the group's committed offset.
func show(ctx context.Context, s *strata.Store, when string) error {
	fmt.Println(when + ":")
	for _, name := range []string{shipmentsTopic, emailsTopic} {
		d, err := s.DescribeTopic(name)
		if err != nil {
			return err
		}
		n := 0
		for p := range d.Partitions {
			recs, err := s.Read(ctx, name, p, 0, 100)
			if err != nil {
				return err
			}
			n += len(recs)
		}
		fmt.Printf("  %s: %d\n", name, n)
	}
	om, _ := s.Committed(group, ordersTopic, 0)
	fmt.Printf("  committed offset of %s: %d of %d\n", ordersTopic, om.Offset, len(orders))
	return nil
}

// dieAfterSyncs fails every file operation after the n-th fsync of
// __transaction_state (from the first one for n = 0), as if the machine
// had died there.
func dieAfterSyncs(n int64) vfs.Injector {
	var syncs atomic.Int64
	var dead atomic.Bool
	return func(op vfs.Op, path string) error {
		if dead.Load() {
			return vfs.ErrInjected
		}
		if op != vfs.OpSync || !strings.Contains(path, strata.TransactionStateTopic) {
			return nil
		}
		switch k := syncs.Add(1); {
		case k > n:
			dead.Store(true)
			return vfs.ErrInjected
		case k == n:
			dead.Store(true) // this one is done; nothing after it
		}
		return nil
	}
}

// short is what err says of the transaction: its message without the
// package prefix and the I/O error it wraps.
func short(err error) string {
	if err == nil {
		return "no error"
	}
	msg, _, _ := strings.Cut(strings.TrimPrefix(err.Error(), "strata: "), ": ")
	return msg
}
