package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stratalog/strata"
)

// Event is something that happened to an account, stored as JSON in the
// value of a record keyed by the account id.
type Event struct {
	Type   string `json:"type"`   // "opened", "deposited" or "withdrawn"
	Amount int64  `json:"amount"` // cents
}

// Account is the aggregate: its state is nothing but its events replayed.
type Account struct {
	ID      string
	Open    bool
	Balance int64 // cents
	Events  int   // events applied
	// Version is the offset of the account's last event in its partition,
	// strata.NoOffset before the first: the expected version of the next
	// append (Store.AppendIfLast).
	Version int64
}

// Apply changes the account as the event says.
func (a *Account) Apply(e Event, offset int64) {
	a.Version = offset
	switch e.Type {
	case "opened":
		a.Open = true
	case "deposited":
		a.Balance += e.Amount
	case "withdrawn":
		a.Balance -= e.Amount
	}
	a.Events++
}

// Accounts handles commands: it loads an account by replaying its events,
// checks the command against that state, and appends the resulting event.
type Accounts struct {
	store *strata.Store
	topic string
}

// Load rebuilds an account from its events. An account's events all live in
// one partition, the one Kafka's murmur2 partitioner picks for its id, so
// Load replays that partition from its start and keeps the records with the
// account's key; the records of other accounts in the same partition are
// skipped. (A real service would start from a snapshot; the replay from
// offset 0 is the point here.)
func (as *Accounts) Load(ctx context.Context, id string) (acct Account, skipped int, err error) {
	acct.ID = id
	acct.Version = strata.NoOffset
	part, err := as.store.PartitionFor(as.topic, []byte(id))
	if err != nil {
		return acct, 0, err
	}
	off, err := as.store.ListOffsets(as.topic, part, strata.Earliest)
	if err != nil {
		return acct, 0, err
	}
	end, err := as.store.ListOffsets(as.topic, part, strata.Latest)
	if err != nil {
		return acct, 0, err
	}
	for off < end {
		recs, err := as.store.Read(ctx, as.topic, part, off, 100)
		if err != nil {
			return acct, 0, err
		}
		for _, r := range recs {
			off = r.Offset + 1
			if !bytes.Equal(r.Key, []byte(id)) {
				skipped++
				continue
			}
			var e Event
			if err := json.Unmarshal(r.Value, &e); err != nil {
				return acct, 0, fmt.Errorf("%s offset %d: %w", id, r.Offset, err)
			}
			acct.Apply(e, r.Offset)
		}
	}
	return acct, skipped, nil
}

// Open opens an account.
func (as *Accounts) Open(ctx context.Context, id string) error {
	return as.handle(ctx, id, func(acct Account) (Event, error) {
		if acct.Open {
			return Event{}, reject("%s is already open", id)
		}
		return Event{Type: "opened"}, nil
	})
}

// Deposit adds money to an open account.
func (as *Accounts) Deposit(ctx context.Context, id string, amount int64) error {
	return as.handle(ctx, id, func(acct Account) (Event, error) {
		if !acct.Open {
			return Event{}, reject("%s is not open", id)
		}
		return Event{Type: "deposited", Amount: amount}, nil
	})
}

// Withdraw takes money from an open account that has enough.
func (as *Accounts) Withdraw(ctx context.Context, id string, amount int64) error {
	return as.handle(ctx, id, func(acct Account) (Event, error) {
		if !acct.Open {
			return Event{}, reject("%s is not open", id)
		}
		if acct.Balance < amount {
			return Event{}, reject("balance is %s", money(acct.Balance))
		}
		return Event{Type: "withdrawn", Amount: amount}, nil
	})
}

// handle runs a command: it loads the account, lets decide check the
// command against it, and appends the event decide returns, expecting the
// account's last event to be the one loaded (AppendIfLast). If another
// writer appended to the account in between, nothing is written: handle
// loads the account again and decides again, so that no decision is made
// on a state that is no longer the account's (two withdrawals cannot both
// spend the same money).
func (as *Accounts) handle(ctx context.Context, id string, decide func(Account) (Event, error)) error {
	for {
		acct, _, err := as.Load(ctx, id)
		if err != nil {
			return err
		}
		e, err := decide(acct)
		if err != nil {
			return err
		}
		value, err := json.Marshal(e)
		if err != nil {
			return err
		}
		off, err := as.store.AppendIfLast(ctx, as.topic, []byte(id), acct.Version, strata.Record{Key: []byte(id), Value: value})
		var wrong *strata.WrongOffsetError
		if errors.As(err, &wrong) {
			fmt.Printf("  %-10s %-9s %8s  retried: the account's last event is now at offset %d, not %d\n",
				id, e.Type, amountOf(e), wrong.Actual, acct.Version)
			continue
		}
		if err != nil {
			return err
		}
		part, err := as.store.PartitionFor(as.topic, []byte(id))
		if err != nil {
			return err
		}
		fmt.Printf("  %-10s %-9s %8s  -> partition %d, offset %d\n", id, e.Type, amountOf(e), part, off)
		return nil
	}
}

// amountOf is the event's amount as printed.
func amountOf(e Event) string {
	if e.Type == "opened" {
		return ""
	}
	return money(e.Amount)
}

// rejection is a command refused by the account's rules, as opposed to a
// failure of the store.
type rejection struct{ reason string }

func (r *rejection) Error() string { return r.reason }

func reject(format string, args ...any) error {
	return &rejection{fmt.Sprintf(format, args...)}
}

// money formats cents as dollars.
func money(cents int64) string {
	return fmt.Sprintf("$%d.%02d", cents/100, cents%100)
}
