package strata_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stratalog/strata"
)

// examplePayments opens a store whose topic "payments" holds, in its one
// partition, what transactions leave behind:
//
//	0  created   a plain record
//	1  paid      a transaction's, committed (its marker at 2)
//	3  draft     a transaction's, aborted (its marker at 4)
//	5  pending   a transaction's, still open
//	6  later     a plain record
//
// The high watermark is 7, the last stable offset 5.
func examplePayments(opts *strata.Options) (s *strata.Store, done func()) {
	s, done = exampleStore(opts)
	if err := s.CreateTopic("payments", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	ctx := context.Background()
	value := func(v string) strata.Record { return strata.Record{Value: []byte(v), Timestamp: exampleTime} }
	must := func(_ int64, err error) {
		if err != nil {
			panic(err)
		}
	}
	must(s.AppendTo(ctx, "payments", 0, value("created")))
	must(strata.AppendTxnBatch(s, "payments", 0, 1, 0, 0, []strata.Record{value("paid")}))
	must(strata.WriteMarker(s, "payments", 0, 1, 0, true))
	must(strata.AppendTxnBatch(s, "payments", 0, 2, 0, 0, []strata.Record{value("draft")}))
	must(strata.WriteMarker(s, "payments", 0, 2, 0, false))
	must(strata.AppendTxnBatch(s, "payments", 0, 3, 0, 0, []strata.Record{value("pending")}))
	must(s.AppendTo(ctx, "payments", 0, value("later")))
	return s, done
}

// printValues prints the offset and value of each record.
func printValues(recs []strata.Record) {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%d:%s", r.Offset, r.Value))
	}
	fmt.Println(strings.Join(out, " "))
}

// A store whose services read only committed data: Options.Isolation is
// ReadCommitted for every read and consumer, and a View reads everything
// for an audit.
func ExampleStore_View() {
	s, done := examplePayments(&strata.Options{Isolation: strata.ReadCommitted})
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
	// 0:created 1:paid 3:draft 5:pending 6:later
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
// first record) and skips the aborted transaction's record.
func ExampleView_Read() {
	s, done := examplePayments(nil)
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
	s, done := examplePayments(nil)
	defer done()
	recs, err := s.View(strata.ReadCommitted).Fetch(context.Background(), "payments", 0, 0, 10, time.Second)
	if err != nil {
		panic(err)
	}
	printValues(recs)
	// Output: 0:created 1:paid
}

// Records tails what committed transactions make visible.
func ExampleView_Records() {
	s, done := examplePayments(nil)
	defer done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for r, err := range s.View(strata.ReadCommitted).Records(ctx, "payments", 0, 0) {
		if err != nil {
			break
		}
		fmt.Printf("%d:%s\n", r.Offset, r.Value)
		if r.Offset == 1 {
			// The open transaction commits: its record, and what
			// follows it, become visible.
			if _, err := strata.WriteMarker(s, "payments", 0, 3, 0, true); err != nil {
				panic(err)
			}
		}
		if r.Offset == 6 {
			cancel()
		}
	}
	// Output:
	// 0:created
	// 1:paid
	// 5:pending
	// 6:later
}

func ExampleView_Scan() {
	s, done := examplePayments(nil)
	defer done()
	for r, err := range s.View(strata.ReadCommitted).Scan("payments", 0, 0) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d:%s\n", r.Offset, r.Value)
	}
	// Output:
	// 0:created
	// 1:paid
}

// A record of an aborted transaction is no record under ReadCommitted,
// and the end of its range is the last stable offset.
func ExampleView_Get() {
	s, done := examplePayments(nil)
	defer done()
	rc := s.View(strata.ReadCommitted)
	r, err := rc.Get("payments", 0, 1)
	fmt.Printf("%s %v\n", r.Value, err)
	_, err = rc.Get("payments", 0, 3)
	fmt.Println(errors.Is(err, strata.ErrNoRecord))
	_, err = rc.Get("payments", 0, 5)
	fmt.Println(errors.Is(err, strata.ErrOffsetOutOfRange))
	// Output:
	// paid <nil>
	// true
	// true
}

func ExampleView_GetInto() {
	s, done := examplePayments(nil)
	defer done()
	buf := make([]byte, 0, 64)
	r, err := s.View(strata.ReadCommitted).GetInto("payments", 0, 0, buf)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", r.Value)
	// Output: created
}

// Latest under ReadCommitted is the last stable offset, as Kafka's
// ListOffsets with isolation_level read_committed answers.
func ExampleView_ListOffsets() {
	s, done := examplePayments(nil)
	defer done()
	hw, _ := s.View(strata.ReadUncommitted).ListOffsets("payments", 0, strata.Latest)
	lso, _ := s.View(strata.ReadCommitted).ListOffsets("payments", 0, strata.Latest)
	fmt.Println("high watermark", hw, "last stable offset", lso)
	// Output: high watermark 7 last stable offset 5
}

// A group's read_committed consumers can reach the last stable offset:
// their lag is measured against it.
func ExampleView_Lag() {
	s, done := examplePayments(nil)
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
	// read_uncommitted end 7 lag 6
	// read_committed end 5 lag 4
}
