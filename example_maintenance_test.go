package strata_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/stratalog/strata"
)

// DeleteRecords moves a partition's start offset forward, as Kafka's
// DeleteRecords does: the records below it can no longer be read.
func ExampleStore_DeleteRecords() {
	s, done := exampleLog("jobs", "a", "b", "c", "d", "e")
	defer done()
	ctx := context.Background()

	if err := s.DeleteRecords("jobs", 0, 3); err != nil {
		panic(err)
	}
	start, _ := s.ListOffsets("jobs", 0, strata.Earliest)
	fmt.Println("start offset", start)
	_, err := s.Read(ctx, "jobs", 0, 1, 10)
	fmt.Println(err)
	recs, _ := s.Read(ctx, "jobs", 0, 3, 10)
	fmt.Println(len(recs), "records left")
	// Output:
	// start offset 3
	// strata: offset 1 of jobs-0 out of range [3, 5]: offset out of range
	// 2 records left
}

// EnforceRetention applies retention now, by the store's clock: here a
// clock the example moves on by a day. Retention deletes whole segments
// whose newest record is older than the topic's Retention.
func ExampleStore_EnforceRetention() {
	now := exampleTime
	s, done := exampleStore(&strata.Options{Now: func() time.Time { return now }})
	defer done()
	ctx := context.Background()
	// Small segments, so that a few records fill one.
	if err := s.CreateTopic("metrics", strata.TopicConfig{Retention: time.Hour, SegmentBytes: 1024}); err != nil {
		panic(err)
	}
	for range 30 {
		if _, err := s.AppendTo(ctx, "metrics", 0, strata.Record{Value: make([]byte, 100)}); err != nil {
			panic(err)
		}
	}
	now = now.Add(24 * time.Hour)
	if _, err := s.AppendTo(ctx, "metrics", 0, strata.Record{Value: []byte("fresh")}); err != nil {
		panic(err)
	}

	d, _ := s.DescribeTopic("metrics")
	fmt.Println("before:", d.Partitions[0].Segments, "segments from offset", d.Partitions[0].StartOffset)
	n, err := s.EnforceRetention(ctx)
	if err != nil {
		panic(err)
	}
	d, _ = s.DescribeTopic("metrics")
	fmt.Println("deleted", n, "segments; after:", d.Partitions[0].Segments, "segment from offset", d.Partitions[0].StartOffset)
	// Output:
	// before: 6 segments from offset 0
	// deleted 5 segments; after: 1 segment from offset 30
}

// EnforceTopicRetention applies one topic's retention now: the other
// topics keep their expired segments until their own turn.
func ExampleStore_EnforceTopicRetention() {
	now := exampleTime
	s, done := exampleStore(&strata.Options{Now: func() time.Time { return now }})
	defer done()
	ctx := context.Background()
	for _, name := range []string{"clicks", "views"} {
		if err := s.CreateTopic(name, strata.TopicConfig{Retention: time.Hour, SegmentBytes: 1024}); err != nil {
			panic(err)
		}
		for range 30 {
			if _, err := s.AppendTo(ctx, name, 0, strata.Record{Value: make([]byte, 100)}); err != nil {
				panic(err)
			}
		}
	}
	now = now.Add(24 * time.Hour)

	n, err := s.EnforceTopicRetention(ctx, "clicks")
	if err != nil {
		panic(err)
	}
	fmt.Println("deleted", n, "segments of clicks")
	for _, name := range []string{"clicks", "views"} {
		d, _ := s.DescribeTopic(name)
		fmt.Println(name, "starts at", d.Partitions[0].StartOffset)
	}
	// Output:
	// deleted 5 segments of clicks
	// clicks starts at 30
	// views starts at 0
}

// Compact cleans a compacted topic now, keeping the latest record of each
// key with its offset (the store also does this every CleanerInterval).
// The active segment is never cleaned: small segments let the example see
// the cleaning, and the older cake stays, in the active segment. A topic
// that does not compact is ErrNotCompacted.
func ExampleStore_Compact() {
	s, done := exampleStore(&strata.Options{CleanerInterval: -1})
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("prices", strata.TopicConfig{
		CleanupPolicy:          strata.CleanupCompact,
		SegmentBytes:           200,
		MinCleanableDirtyRatio: 0.01,
	}); err != nil {
		panic(err)
	}
	for _, kv := range [][2]string{{"tea", "3.10"}, {"jam", "4.00"}, {"tea", "3.20"}, {"jam", "4.50"}, {"tea", "3.30"}, {"cake", "2.00"}, {"cake", "2.10"}} {
		if _, err := s.AppendTo(ctx, "prices", 0, strata.Record{Key: []byte(kv[0]), Value: []byte(kv[1])}); err != nil {
			panic(err)
		}
	}

	st, err := s.Compact(ctx, "prices")
	if err != nil {
		panic(err)
	}
	fmt.Println("superseded records removed:", st.Superseded)
	for r, err := range s.Scan("prices", 0, 0) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d %s=%s\n", r.Offset, r.Key, r.Value)
	}

	if err := s.CreateTopic("events", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	_, err = s.Compact(ctx, "events")
	fmt.Println(errors.Is(err, strata.ErrNotCompacted))
	// Output:
	// superseded records removed: 3
	// 3 jam=4.50
	// 4 tea=3.30
	// 5 cake=2.00
	// 6 cake=2.10
	// true
}

// RebuildRegistry recovers a store whose topics.json was lost or damaged,
// from its partition directories: the data and topic ids come back, the
// configurations get the defaults (with retention off) until set again.
func ExampleRebuildRegistry() {
	dir, err := os.MkdirTemp("", "strata-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	s, err := strata.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	if err := s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}); err != nil {
		panic(err)
	}
	if _, err := s.AppendTo(context.Background(), "orders", 1, strata.Record{Value: []byte("kept")}); err != nil {
		panic(err)
	}
	if err := s.Close(); err != nil {
		panic(err)
	}

	// The registry is lost: Open would find partition directories that no
	// topic lists.
	if err := os.Remove(filepath.Join(dir, "topics.json")); err != nil {
		panic(err)
	}
	topics, err := strata.RebuildRegistry(dir)
	fmt.Println(topics, err)

	s, err = strata.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	d, _ := s.DescribeTopic("orders")
	r, _ := s.Get("orders", 1, 0)
	fmt.Println(len(d.Partitions), "partitions, retention forever:", d.Config.Retention < 0, "record:", string(r.Value))
	// Output:
	// [orders] <nil>
	// 2 partitions, retention forever: true record: kept
}

// Close flushes and closes the store and releases its directory; every
// call after it fails with ErrClosed, and a second Close returns nil.
func ExampleStore_Close() {
	dir, err := os.MkdirTemp("", "strata-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	s, err := strata.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	if err := s.CreateTopic("t", strata.TopicConfig{}); err != nil {
		panic(err)
	}

	fmt.Println(s.Close())
	_, err = s.Append(context.Background(), "t", strata.Record{Value: []byte("late")})
	fmt.Println(errors.Is(err, strata.ErrClosed))
	fmt.Println(s.Close())
	// Output:
	// <nil>
	// true
	// <nil>
}

// Dir is the directory the store was opened on.
func ExampleStore_Dir() {
	dir, err := os.MkdirTemp("", "strata-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	s, err := strata.Open(filepath.Join(dir, "events"), nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	fmt.Println(filepath.Base(s.Dir()))
	// Output:
	// events
}

// Topics lists the topics, sorted, without the internal ones: the offsets
// topic a commit creates is not among them.
func ExampleStore_Topics() {
	s, done := exampleStore(nil)
	defer done()
	for _, name := range []string{"payments", "orders"} {
		if err := s.CreateTopic(name, strata.TopicConfig{}); err != nil {
			panic(err)
		}
	}
	if err := s.Commit("billing", "orders", 0, 0, ""); err != nil { // creates __consumer_offsets
		panic(err)
	}
	fmt.Println(s.Topics())
	// Output:
	// [orders payments]
}
