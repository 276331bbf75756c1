package strata_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stratalog/strata"
)

// examplePayments opens a store whose topic "payments" holds, in its one
// partition, what transactions leave behind. Its records are of 100
// bytes, and the topic's MaxBatchBytes of 256 makes a transaction write
// every two of them before it commits:
//
//	0    created             a plain record
//	1    paid                a transaction's, committed (its marker at 2)
//	3 4  refund 1, refund 2  a transaction's, aborted (its marker at 5)
//	6 7  payout 1, payout 2  the transaction payouts, still open
//	8    later               a plain record
//
// The high watermark is 9, the last stable offset 6. Committing payouts
// writes its third record, payout 3, at 9 and its marker at 10.
func examplePayments(opts *strata.Options) (s *strata.Store, payouts *strata.Txn, done func()) {
	s, done = exampleStore(opts)
	ctx := context.Background()
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(s.CreateTopic("payments", strata.TopicConfig{MaxBatchBytes: 256}))
	value := func(v string) strata.Record { return strata.Record{Value: fmt.Appendf(nil, "%-100s", v)} }
	txn := func(id string, values ...string) *strata.Txn {
		t, err := s.BeginTxn(ctx, strata.TxnOptions{ID: id})
		must(err)
		for _, v := range values {
			must(t.AppendTo(ctx, "payments", 0, value(v)))
		}
		return t
	}
	_, err := s.AppendTo(ctx, "payments", 0, value("created"))
	must(err)
	must(txn("settlement", "paid").Commit(ctx))
	must(txn("refunds", "refund 1", "refund 2", "refund 3").Abort(ctx))
	payouts = txn("payouts", "payout 1", "payout 2", "payout 3")
	_, err = s.AppendTo(ctx, "payments", 0, value("later"))
	must(err)
	return s, payouts, done
}

// printValues prints the offset and value of each record.
func printValues(recs []strata.Record) {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%d:%s", r.Offset, bytes.TrimSpace(r.Value)))
	}
	fmt.Println(strings.Join(out, " "))
}

// A store whose services read only committed data: Options.Isolation is
// ReadCommitted for every read and consumer, and a View reads everything
// for an audit.
func ExampleStore_View() {
	s, _, done := examplePayments(&strata.Options{Isolation: strata.ReadCommitted})
	defer done()
	ctx := context.Background()
	recs, err := s.Read(ctx, "payments", 0, 0, 10)
	if err != nil {
		panic(err)
	}
	printValues(recs)
	audit, err := s.View(strata.ReadUncommitted).Read(ctx, "payments", 0, 0, 10)
	if err != nil {
		panic(err)
	}
	printValues(audit)
	// Output:
	// 0:created 1:paid
	// 0:created 1:paid 3:refund 1 4:refund 2 6:payout 1 7:payout 2 8:later
}

func ExampleIsolation_String() {
	fmt.Println(strata.ReadUncommitted, strata.ReadCommitted)
	// Output: read_uncommitted read_committed
}

func ExampleView_Isolation() {
	s, done := exampleStore(nil)
	defer done()
	fmt.Println(s.View(0).Isolation(), s.View(strata.ReadCommitted).Isolation())
	// Output: read_uncommitted read_committed
}

// ReadCommitted stops at the last stable offset (the open transaction's
// first record) and skips the aborted transaction's records.
func ExampleView_Read() {
	s, _, done := examplePayments(nil)
	defer done()
	recs, err := s.View(strata.ReadCommitted).Read(context.Background(), "payments", 0, 0, 10)
	if err != nil {
		panic(err)
	}
	printValues(recs)
	// Output: 0:created 1:paid
}

// A read_committed Fetch returns the committed records there are; at the
// last stable offset it would wait, up to maxWait, for the open
// transaction to end.
func ExampleView_Fetch() {
	s, _, done := examplePayments(nil)
	defer done()
	recs, err := s.View(strata.ReadCommitted).Fetch(context.Background(), "payments", 0, 0, 10, time.Second)
	if err != nil {
		panic(err)
	}
	printValues(recs)
	// Output: 0:created 1:paid
}

// Records tails what committed transactions make visible: at the last
// stable offset it waits for the open transaction to end.
func ExampleView_Records() {
	s, payouts, done := examplePayments(nil)
	defer done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for r, err := range s.View(strata.ReadCommitted).Records(ctx, "payments", 0, 0) {
		if err != nil {
			break
		}
		fmt.Printf("%d:%s\n", r.Offset, bytes.TrimSpace(r.Value))
		switch r.Offset {
		case 1:
			// The open transaction commits: its records, and what
			// follows them, become visible.
			if err := payouts.Commit(ctx); err != nil {
				panic(err)
			}
		case 9:
			cancel()
		}
	}
	// Output:
	// 0:created
	// 1:paid
	// 6:payout 1
	// 7:payout 2
	// 8:later
	// 9:payout 3
}

func ExampleView_Scan() {
	s, _, done := examplePayments(nil)
	defer done()
	for r, err := range s.View(strata.ReadCommitted).Scan("payments", 0, 0) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d:%s\n", r.Offset, bytes.TrimSpace(r.Value))
	}
	// Output:
	// 0:created
	// 1:paid
}

// A record of an aborted transaction is no record under ReadCommitted,
// and the end of its range is the last stable offset.
func ExampleView_Get() {
	s, _, done := examplePayments(nil)
	defer done()
	rc := s.View(strata.ReadCommitted)
	r, err := rc.Get("payments", 0, 1)
	fmt.Printf("%s %v\n", bytes.TrimSpace(r.Value), err)
	_, err = rc.Get("payments", 0, 3) // refund 1
	fmt.Println(errors.Is(err, strata.ErrNoRecord))
	_, err = rc.Get("payments", 0, 6) // payout 1, of the open transaction
	fmt.Println(errors.Is(err, strata.ErrOffsetOutOfRange))
	// Output:
	// paid <nil>
	// true
	// true
}

func ExampleView_GetInto() {
	s, _, done := examplePayments(nil)
	defer done()
	buf := make([]byte, 0, 128)
	r, err := s.View(strata.ReadCommitted).GetInto("payments", 0, 0, buf)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", bytes.TrimSpace(r.Value))
	// Output: created
}

// Latest under ReadCommitted is the last stable offset, as Kafka's
// ListOffsets with isolation_level read_committed answers.
func ExampleView_ListOffsets() {
	s, _, done := examplePayments(nil)
	defer done()
	hw, _ := s.View(strata.ReadUncommitted).ListOffsets("payments", 0, strata.Latest)
	lso, _ := s.View(strata.ReadCommitted).ListOffsets("payments", 0, strata.Latest)
	fmt.Println("high watermark", hw, "last stable offset", lso)
	// Output: high watermark 9 last stable offset 6
}

// A group's read_committed consumers can reach the last stable offset:
// their lag is measured against it.
func ExampleView_Lag() {
	s, _, done := examplePayments(nil)
	defer done()
	if err := s.Commit("billing", "payments", 0, 1, ""); err != nil {
		panic(err)
	}
	for _, iso := range []strata.Isolation{strata.ReadUncommitted, strata.ReadCommitted} {
		lag, err := s.View(iso).Lag(context.Background(), "billing", "payments")
		if err != nil {
			panic(err)
		}
		fmt.Println(iso, "end", lag[0].EndOffset, "lag", lag[0].Lag)
	}
	// Output:
	// read_uncommitted end 9 lag 8
	// read_committed end 6 lag 5
}
