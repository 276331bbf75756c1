package main

import (
	"fmt"

	"github.com/stratalog/strata"
)

// eventIDHeader is the record header that carries an event's id: the key
// the ledger deduplicates on.
const eventIDHeader = "event-id"

// Event is one event in an order's life, the value of a record keyed by its
// order id.
type Event struct {
	Order  string `json:"order"`
	Type   string `json:"type"` // created, paid or shipped
	Amount int    `json:"amount_cents,omitempty"`
}

// Ledger is the billing database the workers share. It records the id of
// every event it applies together with the event's effect (in a real
// database, in the same transaction), so an event delivered twice is
// applied once: the handler is idempotent, which turns the group's
// at-least-once delivery into effectively-once processing.
type Ledger struct {
	applied    map[string]bool   // ids of the events applied
	status     map[string]string // order id → type of its latest event
	paidCents  int
	duplicates int
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{applied: map[string]bool{}, status: map[string]string{}}
}

// Apply applies the event with the given id and reports whether it did:
// false means the id was applied before, and nothing changed.
func (l *Ledger) Apply(id string, e Event) bool {
	if l.applied[id] {
		l.duplicates++
		return false
	}
	l.applied[id] = true
	l.status[e.Order] = e.Type
	if e.Type == "paid" {
		l.paidCents += e.Amount
	}
	return true
}

// String summarises the ledger.
func (l *Ledger) String() string {
	return fmt.Sprintf("%d events applied once each, %d duplicates skipped, %d orders, %s paid",
		len(l.applied), l.duplicates, len(l.status), money(l.paidCents))
}

// eventID returns the id a record carries in its event-id header.
func eventID(r strata.Record) (string, error) {
	for _, h := range r.Headers {
		if h.Key == eventIDHeader {
			return string(h.Value), nil
		}
	}
	return "", fmt.Errorf("record at offset %d has no %s header", r.Offset, eventIDHeader)
}

// money formats cents as dollars.
func money(cents int) string { return fmt.Sprintf("$%d.%02d", cents/100, cents%100) }
