// Command eventsourcing keeps bank accounts as event-sourced aggregates in a
// Strata topic: every deposit and withdrawal is an event, keyed by the
// account id, so that an account's events stay in one partition and in
// order. It rebuilds an account by replaying its partition, appends each
// command's event only if the account's last event is still the one the
// command was decided on (Store.AppendIfLast: the expected version), so
// that two withdrawals racing on one account cannot both spend the same
// money, and keeps a projection (the balance of every account) that saves
// its offsets, stops, and later catches up from them without processing
// any event twice.
//
//	go run ./examples/eventsourcing
package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/stratalog/strata"
)

const (
	topicName  = "accounts"
	partitions = 3
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "eventsourcing:", err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "strata-eventsourcing-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	s, err := strata.Open(filepath.Join(dir, "store"), nil)
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	if err := s.CreateTopic(topicName, strata.TopicConfig{Partitions: partitions}); err != nil {
		return err
	}
	accounts := &Accounts{store: s, topic: topicName}
	// The projection's file lives beside the store: it is the application's
	// state, not the log's.
	projectionFile := filepath.Join(dir, "balances.json")

	heading("1. Commands append events (keyed by account id)")
	if err := commands(ctx, accounts, []command{
		{"open", "acct-alice", 0},
		{"open", "acct-bob", 0},
		{"open", "acct-carol", 0},
		{"deposit", "acct-alice", 100_00},
		{"deposit", "acct-bob", 50_00},
		{"deposit", "acct-carol", 20_00},
		{"withdraw", "acct-alice", 30_00},
		{"withdraw", "acct-bob", 80_00}, // more than bob has: rejected
		{"deposit", "acct-carol", 5_50},
	}); err != nil {
		return err
	}

	heading("2. Rebuild an account by replaying its partition")
	for _, id := range []string{"acct-alice", "acct-bob"} {
		acct, skipped, err := accounts.Load(ctx, id)
		if err != nil {
			return err
		}
		fmt.Printf("  %-10s balance %-8s from %d events (skipped %d events of other accounts in its partition)\n",
			id, money(acct.Balance), acct.Events, skipped)
	}

	heading("3. Two withdrawals of $70.00 race on acct-alice ($70.00): one goes through")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = accounts.Withdraw(ctx, "acct-alice", 70_00) })
	}
	wg.Wait()
	for _, err := range errs {
		var rejected *rejection
		if err != nil && !errors.As(err, &rejected) {
			return err
		}
		if err != nil {
			fmt.Printf("  %-10s %-9s %8s  rejected: %v\n", "acct-alice", "withdraw", money(70_00), err)
		}
	}
	acct, _, err := accounts.Load(ctx, "acct-alice")
	if err != nil {
		return err
	}
	fmt.Printf("  acct-alice balance %s\n", money(acct.Balance))

	heading("4. A projection (balances) reads every partition, saves its offsets, stops")
	if err := runProjection(ctx, s, projectionFile); err != nil {
		return err
	}

	heading("5. Meanwhile, more events")
	if err := commands(ctx, accounts, []command{
		{"withdraw", "acct-carol", 10_00},
		{"deposit", "acct-bob", 12_34},
		{"open", "acct-erin", 0},
		{"deposit", "acct-erin", 7_00},
	}); err != nil {
		return err
	}

	heading("6. The projection restarts and catches up from its saved offsets")
	if err := runProjection(ctx, s, projectionFile); err != nil {
		return err
	}

	heading("7. Once more: nothing new, nothing processed twice")
	if err := runProjection(ctx, s, projectionFile); err != nil {
		return err
	}

	heading("8. The projection agrees with every aggregate replayed")
	p, err := LoadProjection(projectionFile, partitions)
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(p.Balances)) {
		acct, _, err := accounts.Load(ctx, id)
		if err != nil {
			return err
		}
		fmt.Printf("  %-10s projection %-8s replay %-8s agree: %v\n",
			id, money(p.Balances[id]), money(acct.Balance), p.Balances[id] == acct.Balance)
	}
	return s.Close()
}

// command is a request to change an account.
type command struct {
	name   string // "open", "deposit" or "withdraw"
	id     string
	amount int64 // cents
}

// commands runs each command; a rejected one is printed, not fatal.
func commands(ctx context.Context, as *Accounts, cmds []command) error {
	for _, c := range cmds {
		var err error
		switch c.name {
		case "open":
			err = as.Open(ctx, c.id)
		case "deposit":
			err = as.Deposit(ctx, c.id, c.amount)
		case "withdraw":
			err = as.Withdraw(ctx, c.id, c.amount)
		}
		var rejected *rejection
		if errors.As(err, &rejected) {
			fmt.Printf("  %-10s %-9s %8s  rejected: %v\n", c.id, c.name, money(c.amount), err)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// runProjection loads the projection, catches it up and saves it.
func runProjection(ctx context.Context, s *strata.Store, path string) error {
	p, err := LoadProjection(path, partitions)
	if err != nil {
		return err
	}
	fmt.Printf("  starts at offsets %v\n", p.Next)
	n, err := p.CatchUp(ctx, s, topicName)
	if err != nil {
		return err
	}
	if err := p.Save(path); err != nil {
		return err
	}
	fmt.Printf("  processed %d events; saved offsets %v; balances:\n", n, p.Next)
	for _, id := range slices.Sorted(maps.Keys(p.Balances)) {
		fmt.Printf("    %-10s %s\n", id, money(p.Balances[id]))
	}
	return nil
}

func heading(s string) {
	fmt.Printf("\n== %s\n", s)
}
