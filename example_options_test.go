package strata_test

import (
	"context"
	"fmt"
	"time"

	"github.com/stratalog/strata"
)

// SyncEvery is the default flush policy (every second): after a power
// loss, records older than the interval survive. A topic may set its own
// policy; SyncAlways fsyncs before Append returns.
func ExampleSyncEvery() {
	s, done := exampleStore(&strata.Options{Sync: strata.SyncEvery(100 * time.Millisecond)})
	defer done()
	if err := s.CreateTopic("payments", strata.TopicConfig{Sync: strata.SyncAlways}); err != nil {
		panic(err)
	}
	if err := s.CreateTopic("clicks", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	for _, name := range s.Topics() {
		d, _ := s.DescribeTopic(name)
		fmt.Println(name, d.Config.Sync)
	}
	fmt.Println(strata.SyncEvery(100*time.Millisecond), strata.SyncNever)
	// Output:
	// clicks every 1s
	// payments always
	// every 100ms never
}

// assignment makes consumers a and b join group "g" over topics "t0" and
// "t1", of three partitions each, with the assignor, polls until the group
// settles, and prints who owns what.
func assignment(assignor strata.Assignor) {
	s, done := exampleStore(&strata.Options{Assignor: assignor})
	defer done()
	for _, name := range []string{"t0", "t1"} {
		if err := s.CreateTopic(name, strata.TopicConfig{Partitions: 3}); err != nil {
			panic(err)
		}
	}
	opts := strata.ConsumerOptions{PollWait: time.Millisecond}
	var cs []*strata.Consumer
	for range 2 {
		c, err := s.Consumer("g", []string{"t0", "t1"}, opts)
		if err != nil {
			panic(err)
		}
		defer c.Close()
		cs = append(cs, c)
	}
	for range 3 { // the rebalance hands partitions over in steps
		for _, c := range cs {
			// Nothing to read: each Poll checks in with the group and
			// returns when ctx ends.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
			if _, err := c.Poll(ctx); err != nil && ctx.Err() == nil {
				panic(err)
			}
			cancel()
		}
	}
	fmt.Println(assignor.Name())
	for i, c := range cs {
		fmt.Println(" consumer", i, c.Assignment())
	}
}

// The assignors share a group's partitions among its consumers: Range,
// the default, gives each consumer a run of each topic's partitions (so
// partitions of the same number stay together).
func ExampleRangeAssignor() {
	assignment(strata.RangeAssignor())
	// Output:
	// range
	//  consumer 0 [t0-0 t0-1 t1-0 t1-1]
	//  consumer 1 [t0-2 t1-2]
}

// RoundRobin deals every partition in turn.
func ExampleRoundRobinAssignor() {
	assignment(strata.RoundRobinAssignor())
	// Output:
	// roundrobin
	//  consumer 0 [t0-0 t0-2 t1-1]
	//  consumer 1 [t0-1 t1-0 t1-2]
}

// Sticky balances, then keeps partitions where they were, so that a
// consumer joining or leaving moves only what must move.
func ExampleStickyAssignor() {
	assignment(strata.StickyAssignor())
	// Output:
	// sticky
	//  consumer 0 [t0-0 t0-1 t1-0]
	//  consumer 1 [t0-2 t1-1 t1-2]
}

// A LogAppendTime topic stamps every record with the store's clock when
// it is appended, whatever time its writer gave it (Kafka's
// message.timestamp.type); CreateTime, the default, keeps the writer's.
func ExampleTimestampType() {
	s, done := exampleStore(&strata.Options{Now: func() time.Time { return exampleTime }})
	defer done()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		typ  strata.TimestampType
	}{{"created", strata.CreateTime}, {"appended", strata.LogAppendTime}} {
		if err := s.CreateTopic(tc.name, strata.TopicConfig{TimestampType: tc.typ}); err != nil {
			panic(err)
		}
		r := strata.Record{Value: []byte("v"), Timestamp: exampleTime.Add(-time.Hour)}
		if _, err := s.AppendTo(ctx, tc.name, 0, r); err != nil {
			panic(err)
		}
		got, err := s.Get(tc.name, 0, 0)
		if err != nil {
			panic(err)
		}
		fmt.Println(tc.typ, got.Timestamp.UTC().Format(time.TimeOnly))
	}
	// Output:
	// CreateTime 08:00:00
	// LogAppendTime 09:00:00
}
