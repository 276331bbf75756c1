package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stratalog/strata"
)

const (
	// commitEvery is how many polls with records a worker processes
	// between two commits. Each commit is an append to __consumer_offsets;
	// what is not committed yet is at worst delivered again, and the ledger
	// skips what it has seen.
	commitEvery = 2
	// pollTimeout bounds each Poll: Poll waits for records until its
	// context ends, and the workers take turns.
	pollTimeout = 10 * time.Millisecond
)

// Worker is one member of the billing group: it polls its partitions,
// applies every event to the ledger, then commits (at least once). Before a
// partition moves to another worker, OnRevoked commits what was processed
// there, so a rebalance redelivers nothing.
type Worker struct {
	name   string
	s      *strata.Store
	ledger *Ledger
	c      *strata.Consumer
	polls  int // polls with records since the last commit
}

// NewWorker joins the billing group.
func NewWorker(s *strata.Store, name string, ledger *Ledger) (*Worker, error) {
	w := &Worker{name: name, s: s, ledger: ledger}
	c, err := s.Consumer(billingGroup, []string{topicName}, strata.ConsumerOptions{
		// A partition the group has never committed is read from its
		// start, not from its end (Kafka's default, ResetLatest).
		AutoOffsetReset: strata.ResetEarliest,
		MaxPollRecords:  3,
		// An empty Poll waits up to PollWait before it checks in with the
		// group again. Longer than pollTimeout, it makes a Poll either
		// return records at once or wait its context out.
		PollWait:   time.Second,
		OnAssigned: w.onAssigned,
		OnRevoked:  w.onRevoked,
	})
	if err != nil {
		return nil, err
	}
	w.c = c
	fmt.Printf("%s joins group %s as member %s\n", name, billingGroup, c.MemberID())
	return w, nil
}

// Poll polls once, applies the events it gets to the ledger, and commits
// after every commitEvery polls with records.
func (w *Worker) Poll(ctx context.Context) error {
	n, err := w.process(ctx)
	if err != nil || n == 0 {
		return err
	}
	if w.polls++; w.polls < commitEvery {
		return nil
	}
	if err := w.c.Commit(ctx); err != nil {
		return err
	}
	w.polls = 0
	fmt.Printf("  %s commits\n", w.name)
	return nil
}

// process polls once and applies the events it gets, without committing.
// It returns how many records it got.
func (w *Worker) process(ctx context.Context) (int, error) {
	pctx, cancel := context.WithTimeout(ctx, pollTimeout)
	msgs, err := w.c.Poll(pctx)
	cancel()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return 0, err
	}
	if len(msgs) == 0 {
		return 0, nil
	}
	var dups []string
	applied := 0
	for _, m := range msgs {
		id, err := eventID(m.Record)
		if err != nil {
			return 0, err
		}
		var e Event
		if err := json.Unmarshal(m.Value, &e); err != nil {
			return 0, fmt.Errorf("event %s: %w", id, err)
		}
		if w.ledger.Apply(id, e) {
			applied++
		} else {
			dups = append(dups, id)
		}
	}
	line := fmt.Sprintf("  %s polls %s: applies %d", w.name, describe(msgs), applied)
	if len(dups) > 0 {
		line += fmt.Sprintf(", skips %d already applied (%s)", len(dups), strings.Join(dups, " "))
	}
	fmt.Println(line)
	return len(msgs), nil
}

// Close leaves the group; OnRevoked commits first.
func (w *Worker) Close() error {
	fmt.Printf("%s leaves the group (Close)\n", w.name)
	return w.c.Close()
}

// onAssigned says where the worker starts on the partitions it is handed.
func (w *Worker) onAssigned(_ context.Context, _ *strata.Consumer, parts []strata.TopicPartition) {
	var where []string
	for _, tp := range parts {
		if om, ok := w.s.Committed(billingGroup, tp.Topic, tp.Partition); ok {
			where = append(where, fmt.Sprintf("%s from committed offset %d", tp, om.Offset))
		} else {
			where = append(where, fmt.Sprintf("%s from the start (no commit)", tp))
		}
	}
	fmt.Printf("  %s is assigned %s\n", w.name, strings.Join(where, ", "))
}

// onRevoked commits what the worker processed before its partitions move:
// the records Poll returned were all applied by the time Poll runs again.
func (w *Worker) onRevoked(ctx context.Context, c *strata.Consumer, parts []strata.TopicPartition) {
	before := w.committed(parts)
	if err := c.Commit(ctx); err != nil {
		fmt.Printf("  %s gives up %s: its commit fails: %v\n", w.name, names(parts), err)
		return
	}
	w.polls = 0
	after := w.committed(parts)
	var moves []string
	for i, tp := range parts {
		moves = append(moves, fmt.Sprintf("%s: %s -> %s", tp, before[i], after[i]))
	}
	fmt.Printf("  %s gives up %s, committing first (%s)\n", w.name, names(parts), strings.Join(moves, ", "))
}

// committed returns the group's committed offsets of parts ("-" for none).
func (w *Worker) committed(parts []strata.TopicPartition) []string {
	var out []string
	for _, tp := range parts {
		if om, ok := w.s.Committed(billingGroup, tp.Topic, tp.Partition); ok {
			out = append(out, fmt.Sprint(om.Offset))
		} else {
			out = append(out, "-")
		}
	}
	return out
}

// names lists partitions as orders-0 orders-1.
func names(parts []strata.TopicPartition) string {
	var out []string
	for _, tp := range parts {
		out = append(out, tp.String())
	}
	return strings.Join(out, " ")
}

// describe lists the offsets of msgs by partition: orders-0@0..2 orders-1@4.
func describe(msgs []strata.Message) string {
	var out []string
	for i := 0; i < len(msgs); {
		j := i + 1
		for j < len(msgs) && msgs[j].Partition == msgs[i].Partition && msgs[j].Offset == msgs[j-1].Offset+1 {
			j++
		}
		s := fmt.Sprintf("%s-%d@%d", msgs[i].Topic, msgs[i].Partition, msgs[i].Offset)
		if j-i > 1 {
			s += fmt.Sprintf("..%d", msgs[j-1].Offset)
		}
		out = append(out, s)
		i = j
	}
	return strings.Join(out, " ")
}
