package main

import (
	"bytes"
	"context"
	"encoding/json"
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
}

// Apply changes the account as the event says.
func (a *Account) Apply(e Event) {
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
			acct.Apply(e)
		}
	}
	return acct, skipped, nil
}

// Open opens an account.
func (as *Accounts) Open(ctx context.Context, id string) error {
	acct, _, err := as.Load(ctx, id)
	if err != nil {
		return err
	}
	if acct.Open {
		return reject("%s is already open", id)
	}
	return as.append(ctx, id, Event{Type: "opened"})
}

// Deposit adds money to an open account.
func (as *Accounts) Deposit(ctx context.Context, id string, amount int64) error {
	acct, _, err := as.Load(ctx, id)
	if err != nil {
		return err
	}
	if !acct.Open {
		return reject("%s is not open", id)
	}
	return as.append(ctx, id, Event{Type: "deposited", Amount: amount})
}

// Withdraw takes money from an open account that has enough.
func (as *Accounts) Withdraw(ctx context.Context, id string, amount int64) error {
	acct, _, err := as.Load(ctx, id)
	if err != nil {
		return err
	}
	if !acct.Open {
		return reject("%s is not open", id)
	}
	if acct.Balance < amount {
		return reject("balance is %s", money(acct.Balance))
	}
	return as.append(ctx, id, Event{Type: "withdrawn", Amount: amount})
}

func (as *Accounts) append(ctx context.Context, id string, e Event) error {
	value, err := json.Marshal(e)
	if err != nil {
		return err
	}
	pos, err := as.store.Append(ctx, as.topic, strata.Record{Key: []byte(id), Value: value})
	if err != nil {
		return err
	}
	amount := ""
	if e.Type != "opened" {
		amount = money(e.Amount)
	}
	fmt.Printf("  %-10s %-9s %8s  -> partition %d, offset %d\n", id, e.Type, amount, pos[0].Partition, pos[0].Offset)
	return nil
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
