package strata_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
	"github.com/stratalog/strata/vfs"
)

// exampleStore opens a store in a new temporary directory; done closes it
// and removes the directory.
func exampleStore(opts *strata.Options) (s *strata.Store, done func()) {
	dir, err := os.MkdirTemp("", "strata-example-")
	if err != nil {
		panic(err)
	}
	s, err = strata.Open(dir, opts)
	if err != nil {
		panic(err)
	}
	return s, func() {
		if err := s.Close(); err != nil {
			panic(err)
		}
		os.RemoveAll(dir)
	}
}

// exampleLog opens a store with a topic of one partition holding values,
// in order from offset 0; done closes the store and removes it.
func exampleLog(topicName string, values ...string) (s *strata.Store, done func()) {
	s, done = exampleStore(nil)
	if err := s.CreateTopic(topicName, strata.TopicConfig{}); err != nil {
		panic(err)
	}
	for _, v := range values {
		if _, err := s.AppendTo(context.Background(), topicName, 0, strata.Record{Value: []byte(v)}); err != nil {
			panic(err)
		}
	}
	return s, done
}

// exampleTime is the fixed clock of the examples that print timestamps.
var exampleTime = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

// The README's quickstart: open a store, create a topic, append keyed
// records and read them back.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "strata-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	s, err := strata.Open(dir, nil) // nil: the default options
	if err != nil {
		panic(err)
	}
	defer s.Close()

	ctx := context.Background()
	if err := s.CreateTopic("orders", strata.TopicConfig{Partitions: 3}); err != nil {
		panic(err)
	}
	// Records with the same key land in the same partition, in order.
	pos, err := s.Append(ctx, "orders",
		strata.Record{Key: []byte("order-1"), Value: []byte(`{"event":"created"}`)},
		strata.Record{Key: []byte("order-1"), Value: []byte(`{"event":"paid"}`)},
	)
	if err != nil {
		panic(err)
	}
	recs, err := s.Read(ctx, "orders", pos[0].Partition, 0, 100)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Printf("partition %d offset %d: %s %s\n", pos[0].Partition, r.Offset, r.Key, r.Value)
	}
	// Output:
	// partition 1 offset 0: order-1 {"event":"created"}
	// partition 1 offset 1: order-1 {"event":"paid"}
}

// A second Open of a directory fails until the first store is closed.
func ExampleOpen_locked() {
	dir, err := os.MkdirTemp("", "strata-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	s, err := strata.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	_, err = strata.Open(dir, nil)
	fmt.Println("second Open:", errors.Is(err, strata.ErrLocked))

	if err := s.Close(); err != nil {
		panic(err)
	}
	s, err = strata.Open(dir, nil)
	fmt.Println("after Close:", err)
	s.Close()
	// Output:
	// second Open: true
	// after Close: <nil>
}

func ExampleStore_CreateTopic() {
	s, done := exampleStore(nil)
	defer done()

	err := s.CreateTopic("payments", strata.TopicConfig{
		Partitions: 6,
		Retention:  24 * time.Hour,
	})
	fmt.Println("payments:", err)

	// Bad names and duplicates are refused, and change nothing.
	err = s.CreateTopic("payments", strata.TopicConfig{})
	fmt.Println("again:", errors.Is(err, strata.ErrTopicExists))
	err = s.CreateTopic("pay/ments", strata.TopicConfig{})
	fmt.Println("pay/ments:", errors.Is(err, strata.ErrInvalidTopic))
	err = s.CreateTopic("__internal", strata.TopicConfig{})
	fmt.Println("__internal:", errors.Is(err, strata.ErrReservedTopic))

	fmt.Println(s.Topics())
	// Output:
	// payments: <nil>
	// again: true
	// pay/ments: true
	// __internal: true
	// [payments]
}

// Append routes each keyed record to the partition Kafka's murmur2
// partitioner picks, and writes one batch per partition.
func ExampleStore_Append() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("clicks", strata.TopicConfig{Partitions: 4}); err != nil {
		panic(err)
	}

	pos, err := s.Append(ctx, "clicks",
		strata.Record{Key: []byte("user-1"), Value: []byte("home")},
		strata.Record{Key: []byte("user-5"), Value: []byte("home")},
		strata.Record{Key: []byte("user-1"), Value: []byte("cart")},
		strata.Record{Key: []byte("user-6"), Value: []byte("home")},
	)
	if err != nil {
		panic(err)
	}
	for i, key := range []string{"user-1", "user-5", "user-1", "user-6"} {
		part, err := s.PartitionFor("clicks", []byte(key))
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s -> partition %d offset %d (murmur2: %d)\n", key, pos[i].Partition, pos[i].Offset, part)
	}

	_, err = s.Append(ctx, "no-such-topic", strata.Record{Value: []byte("x")})
	fmt.Println(errors.Is(err, strata.ErrUnknownTopic))
	// Output:
	// user-1 -> partition 0 offset 0 (murmur2: 0)
	// user-5 -> partition 2 offset 0 (murmur2: 2)
	// user-1 -> partition 0 offset 1 (murmur2: 0)
	// user-6 -> partition 1 offset 0 (murmur2: 1)
	// true
}

// AppendTo writes to the partition the caller chooses, as one batch.
func ExampleStore_AppendTo() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("jobs", strata.TopicConfig{Partitions: 2}); err != nil {
		panic(err)
	}

	first, err := s.AppendTo(ctx, "jobs", 1,
		strata.Record{Value: []byte("resize a.png")},
		strata.Record{Value: []byte("resize b.png")},
	)
	fmt.Println(first, err)
	first, err = s.AppendTo(ctx, "jobs", 1, strata.Record{Value: []byte("resize c.png")})
	fmt.Println(first, err)

	_, err = s.AppendTo(ctx, "jobs", 2, strata.Record{Value: []byte("lost")})
	fmt.Println(errors.Is(err, strata.ErrUnknownPartition))
	// Output:
	// 0 <nil>
	// 2 <nil>
	// true
}

// Read returns the records from an offset on, up to a maximum; they are the
// caller's to keep.
func ExampleStore_Read() {
	s, done := exampleLog("log", "a", "b", "c", "d", "e")
	defer done()
	ctx := context.Background()

	recs, err := s.Read(ctx, "log", 0, 1, 3) // offsets 1, 2, 3
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Println(r.Offset, string(r.Value))
	}

	recs, err = s.Read(ctx, "log", 0, 5, 3) // the end offset: nothing yet
	fmt.Println(len(recs), err)
	_, err = s.Read(ctx, "log", 0, 6, 3) // past the end
	fmt.Println(errors.Is(err, strata.ErrOffsetOutOfRange))
	// Output:
	// 1 b
	// 2 c
	// 3 d
	// 0 <nil>
	// true
}

// Fetch waits for records at the end of a partition, up to a maximum wait.
func ExampleStore_Fetch() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("events", strata.TopicConfig{}); err != nil {
		panic(err)
	}

	// Nothing at offset 0 yet, and nothing arrives within 10 ms.
	recs, err := s.Fetch(ctx, "events", 0, 0, 100, 10*time.Millisecond)
	fmt.Println(len(recs), err)

	// A record arrives while Fetch waits: Fetch returns it at once.
	appended := make(chan error)
	go func() {
		_, err := s.AppendTo(ctx, "events", 0, strata.Record{Value: []byte("hello")})
		appended <- err
	}()
	recs, err = s.Fetch(ctx, "events", 0, 0, 100, time.Minute)
	if err != nil {
		panic(err)
	}
	if err := <-appended; err != nil {
		panic(err)
	}
	fmt.Println(recs[0].Offset, string(recs[0].Value))
	// Output:
	// 0 <nil>
	// 0 hello
}

// ListOffsets finds the start and end offsets of a partition, and the first
// offset at or after a time.
func ExampleStore_ListOffsets() {
	s, done := exampleStore(&strata.Options{Now: func() time.Time { return exampleTime.Add(time.Hour) }})
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("metrics", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	for i := range 3 { // 09:00, 09:01, 09:02
		r := strata.Record{Value: []byte("sample"), Timestamp: exampleTime.Add(time.Duration(i) * time.Minute)}
		if _, err := s.AppendTo(ctx, "metrics", 0, r); err != nil {
			panic(err)
		}
	}

	for _, q := range []struct {
		name string
		spec strata.OffsetSpec
	}{
		{"Earliest", strata.Earliest},
		{"Latest", strata.Latest},
		{"AtTime(09:01)", strata.AtTime(exampleTime.Add(time.Minute))},
		{"AtTime(09:01:30)", strata.AtTime(exampleTime.Add(90 * time.Second))},
		{"AtTime(10:00)", strata.AtTime(exampleTime.Add(time.Hour))},
	} {
		off, err := s.ListOffsets("metrics", 0, q.spec)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-16s %d\n", q.name, off)
	}
	// Output:
	// Earliest         0
	// Latest           3
	// AtTime(09:01)    1
	// AtTime(09:01:30) 2
	// AtTime(10:00)    -1
}

// Records iterates a partition and then tails it: at the end it waits for
// more until ctx ends, so a loop that wants only what is there stops at the
// end offset.
func ExampleStore_Records() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("audit", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	if _, err := s.AppendTo(ctx, "audit", 0,
		strata.Record{Key: []byte("alice"), Value: []byte("login")},
		strata.Record{Key: []byte("alice"), Value: []byte("logout")},
		strata.Record{Key: []byte("bob"), Value: []byte("login")},
	); err != nil {
		panic(err)
	}

	end, err := s.ListOffsets("audit", 0, strata.Latest)
	if err != nil {
		panic(err)
	}
	var kept [][]byte
	for r, err := range s.Records(ctx, "audit", 0, 0) {
		if err != nil {
			panic(err)
		}
		fmt.Println(r.Offset, string(r.Key), string(r.Value))
		// r's bytes are valid only in this iteration: copy what you keep.
		kept = append(kept, bytes.Clone(r.Value))
		if r.Offset+1 == end {
			break
		}
	}
	fmt.Printf("%s\n", kept)
	// Output:
	// 0 alice login
	// 1 alice logout
	// 2 bob login
	// [login logout login]
}

// DescribeTopic reports a topic's configuration, with the defaults filled
// in, and per partition its offsets, segments and record times.
func ExampleStore_DescribeTopic() {
	s, done := exampleStore(&strata.Options{Now: func() time.Time { return exampleTime }})
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}); err != nil {
		panic(err)
	}
	// The records have no timestamp: they get the store's clock's time.
	if _, err := s.AppendTo(ctx, "orders", 0,
		strata.Record{Value: []byte("a")}, strata.Record{Value: []byte("b")}); err != nil {
		panic(err)
	}

	d, err := s.DescribeTopic("orders")
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Name, "retention", d.Config.Retention, "cleanup", d.Config.CleanupPolicy)
	for _, p := range d.Partitions {
		fmt.Printf("partition %d: [%d, %d) in %d segment", p.Partition, p.StartOffset, p.EndOffset, p.Segments)
		if p.EndOffset > p.StartOffset {
			fmt.Printf(", records from %s to %s", p.OldestTimestamp.UTC().Format(time.TimeOnly), p.NewestTimestamp.UTC().Format(time.TimeOnly))
		}
		fmt.Println()
	}
	// Output:
	// orders retention 168h0m0s cleanup delete
	// partition 0: [0, 2) in 1 segment, records from 09:00:00 to 09:00:00
	// partition 1: [0, 0) in 1 segment
}

// Stats are counters and sizes per partition, for a service to export.
func ExampleStore_Stats() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("t", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	if _, err := s.AppendTo(ctx, "t", 0, strata.Record{Value: []byte("x")}, strata.Record{Value: []byte("y")}); err != nil {
		panic(err)
	}
	if _, err := s.Read(ctx, "t", 0, 0, 10); err != nil {
		panic(err)
	}

	st := s.Stats().Topics["t"][0]
	fmt.Println("appends", st.Appends, "records", st.AppendedRecords, "reads", st.Reads, "end offset", st.EndOffset)
	// Output:
	// appends 1 records 2 reads 1 end offset 2
}

// DeleteTopic removes a topic and its files.
func ExampleStore_DeleteTopic() {
	s, done := exampleStore(nil)
	defer done()
	for _, name := range []string{"keep", "scratch"} {
		if err := s.CreateTopic(name, strata.TopicConfig{}); err != nil {
			panic(err)
		}
	}

	fmt.Println(s.DeleteTopic("scratch"), s.Topics())
	_, err := s.DescribeTopic("scratch")
	fmt.Println(errors.Is(err, strata.ErrUnknownTopic))
	// Output:
	// <nil> [keep]
	// true
}

// In a test, stratatest.Open gives a store in memory (with SyncNever: tests
// need no fsync) that is closed when the test ends; stratatest.OpenOnDisk
// gives one in t.TempDir() for a test that needs real files. The test below
// is what a test file would hold; BenchmarkStratatestRoundTrip measures it.
func Example_stratatest() {
	testOrders := func(t *testing.T) {
		s := stratatest.Open(t, &strata.Options{Now: func() time.Time { return exampleTime }})
		ctx := context.Background()
		if err := s.CreateTopic("orders", strata.TopicConfig{Partitions: 3}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, "orders", strata.Record{Key: []byte("order-1"), Value: []byte("created")}); err != nil {
			t.Fatal(err)
		}
		// ... the code under test reads the topic ...
	}
	_ = testOrders // func TestOrders(t *testing.T) in a _test.go file
}

// A store on Options.FS = vfs.NewMem() lives in memory: nothing touches the
// disk, and the Mem keeps the files for a later Open of the same directory.
func Example_inMemory() {
	mem := vfs.NewMem()
	opts := &strata.Options{FS: mem, Sync: strata.SyncNever}
	s, err := strata.Open("/orders-store", opts)
	if err != nil {
		panic(err)
	}
	if err := s.CreateTopic("orders", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	if _, err := s.AppendTo(context.Background(), "orders", 0, strata.Record{Value: []byte("created")}); err != nil {
		panic(err)
	}
	if err := s.Close(); err != nil {
		panic(err)
	}

	s, err = strata.Open("/orders-store", opts) // the same Mem: the same files
	if err != nil {
		panic(err)
	}
	defer s.Close()
	recs, err := s.Read(context.Background(), "orders", 0, 0, 10)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d record: %s\n", len(recs), recs[0].Value)
	// Output:
	// 1 record: created
}
