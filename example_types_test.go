package strata_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/stratalog/strata"
)

// WithDefaults shows the configuration a topic runs with, or why
// CreateTopic would refuse it.
func ExampleTopicConfig_WithDefaults() {
	cfg, err := strata.TopicConfig{Partitions: 3}.WithDefaults()
	fmt.Println(cfg.Partitions, cfg.Retention, cfg.SegmentBytes, cfg.MaxBatchBytes, cfg.CleanupPolicy, cfg.Compression, err)

	_, err = strata.TopicConfig{Partitions: 100000}.WithDefaults()
	fmt.Println(errors.Is(err, strata.ErrInvalidConfig))

	// Output:
	// 3 168h0m0s 1073741824 1048576 delete producer <nil>
	// true
}

func ExampleTopicID_String() {
	var id strata.TopicID
	copy(id[:], "0123456789abcdef")
	fmt.Println(id)
	fmt.Println(len(id.String()))

	// Output:
	// MDEyMzQ1Njc4OWFiY2RlZg
	// 22
}

// The zero TopicID is no topic's.
func ExampleTopicID_IsZero() {
	var id strata.TopicID
	fmt.Println(id.IsZero())
	copy(id[:], "0123456789abcdef")
	fmt.Println(id.IsZero())

	// Output:
	// true
	// false
}

// A TopicID is a JSON string, its String form.
func ExampleTopicID_MarshalText() {
	var id strata.TopicID
	copy(id[:], "0123456789abcdef")
	b, err := json.Marshal(map[string]strata.TopicID{"topic_id": id})
	fmt.Println(string(b), err)

	// Output:
	// {"topic_id":"MDEyMzQ1Njc4OWFiY2RlZg"} <nil>
}

func ExampleTopicID_UnmarshalText() {
	var id strata.TopicID
	err := id.UnmarshalText([]byte("MDEyMzQ1Njc4OWFiY2RlZg"))
	fmt.Println(string(id[:]), err)

	err = id.UnmarshalText([]byte("not an id"))
	fmt.Println(err != nil)

	// Output:
	// 0123456789abcdef <nil>
	// true
}

func ExampleTopicPartition_String() {
	fmt.Println(strata.TopicPartition{Topic: "orders", Partition: 3})

	// Output:
	// orders-3
}

// Compare sorts partitions by topic, then by number.
func ExampleTopicPartition_Compare() {
	tps := []strata.TopicPartition{{Topic: "payments", Partition: 0}, {Topic: "orders", Partition: 10}, {Topic: "orders", Partition: 2}}
	slices.SortFunc(tps, strata.TopicPartition.Compare)
	fmt.Println(tps)

	// Output:
	// [orders-2 orders-10 payments-0]
}

func ExampleCleanupPolicy_Compacts() {
	for _, p := range []strata.CleanupPolicy{strata.CleanupDelete, strata.CleanupCompact, strata.CleanupCompactDelete} {
		fmt.Println(p, p.Compacts())
	}

	// Output:
	// delete false
	// compact true
	// compact,delete true
}

func ExampleCleanupPolicy_Deletes() {
	for _, p := range []strata.CleanupPolicy{strata.CleanupDelete, strata.CleanupCompact, strata.CleanupCompactDelete} {
		fmt.Println(p, p.Deletes())
	}

	// Output:
	// delete true
	// compact false
	// compact,delete true
}

// Codec names the codec a compression type makes a topic's batches use;
// producer names none.
func ExampleCompressionType_Codec() {
	for _, c := range []strata.CompressionType{strata.CompressionZstd, strata.CompressionNone, strata.CompressionProducer} {
		codec, ok := c.Codec()
		fmt.Println(c, codec, ok)
	}

	// Output:
	// zstd zstd true
	// none none true
	// producer none false
}

func ExampleSyncPolicy_String() {
	fmt.Println(strata.SyncAlways, strata.SyncNever, strata.SyncEvery(0), strata.SyncEvery(100*time.Millisecond))

	// Output:
	// always never every 1s every 100ms
}

func ExampleSyncPolicy_Validate() {
	fmt.Println(strata.SyncEvery(time.Second).Validate())
	fmt.Println(strata.SyncPolicy{Interval: -time.Second}.Validate() != nil)

	// Output:
	// <nil>
	// true
}

func ExampleOffsetReset_String() {
	fmt.Println(strata.ResetLatest, strata.ResetEarliest, strata.ResetNone)

	// Output:
	// latest earliest none
}

// Position is where a consumer of the group starts reading a partition
// whose retained offsets are [start, end): its committed offset if that is
// in range, else where the policy says.
func ExampleOffsetReset_Position() {
	tp := strata.TopicPartition{Topic: "orders", Partition: 0}
	const start, end = 100, 250
	fmt.Println(strata.ResetLatest.Position(tp, 120, true, start, end)) // committed, in range
	fmt.Println(strata.ResetLatest.Position(tp, 0, false, start, end))  // nothing committed
	fmt.Println(strata.ResetEarliest.Position(tp, 7, true, start, end)) // committed, since deleted
	_, err := strata.ResetNone.Position(tp, 0, false, start, end)
	fmt.Println(errors.Is(err, strata.ErrNoOffset))

	// Output:
	// 120 <nil>
	// 250 <nil>
	// 100 <nil>
	// true
}

// Add totals the statistics of several cleanings.
func ExampleCompactionStats_Add() {
	var total strata.CompactionStats
	total.Add(strata.CompactionStats{RecordsRead: 10, RecordsWritten: 4, Superseded: 6, Segments: 1})
	total.Add(strata.CompactionStats{RecordsRead: 5, RecordsWritten: 5, Segments: 1})
	fmt.Println(total.RecordsRead, total.RecordsWritten, total.Superseded, total.Segments)

	// Output:
	// 15 9 6 2
}

func ExampleTimestampType_String() {
	fmt.Println(strata.CreateTime, strata.LogAppendTime)

	// Output:
	// CreateTime LogAppendTime
}
