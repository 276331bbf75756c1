package log_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/stratalog/strata/log"
)

func ExampleEncodeBatch() {
	recs := []log.Record{
		{Timestamp: time.UnixMilli(1700000000000), Key: []byte("user-1"), Value: []byte("signed up")},
		{Key: []byte("user-1"), Value: nil}, // a tombstone, timestamped Now
	}
	batch, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: 1700000000500})
	if err != nil {
		panic(err)
	}
	h, err := log.CheckBatch(batch)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(batch), h.NumRecords, h.NextOffset(), h.MaxTimestamp, h.TimestampType())
	// Output: 97 2 2 1700000000500 CreateTime
}

func ExampleRecordIter() {
	batch, _ := log.EncodeBatch(nil, []log.Record{
		{Key: []byte("a"), Value: []byte("1"), Headers: []log.Header{{Key: "trace", Value: []byte("x")}}},
		{Key: []byte("b"), Value: []byte("2")},
	}, log.BatchOptions{Now: 1700000000000})
	log.SetBaseOffset(batch, 40) // as a partition does when it appends the batch

	it, err := log.NewRecordIter(batch)
	if err != nil {
		panic(err)
	}
	var r log.Record // reused: Key and Value alias batch
	for it.Next(&r) {
		fmt.Println(r.Offset, r.Timestamp.Format(time.RFC3339), string(r.Key), string(r.Value), len(r.Headers))
	}
	if err := it.Err(); err != nil {
		panic(err)
	}
	// Output:
	// 40 2023-11-14T22:13:20Z a 1 1
	// 41 2023-11-14T22:13:20Z b 2 0
}

func ExampleRecords() {
	batch, _ := log.EncodeBatch(nil, []log.Record{{Value: []byte("hello")}}, log.BatchOptions{})
	for r, err := range log.Records(batch) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d %q key=%v\n", r.Offset, r.Value, r.Key == nil)
	}
	// Output: 0 "hello" key=true
}

func ExampleCheckBatch() {
	batch, _ := log.EncodeBatch(nil, []log.Record{{Value: []byte("hello")}}, log.BatchOptions{})

	_, err := log.CheckBatch(batch[:len(batch)-1]) // a torn write
	fmt.Println(errors.Is(err, log.ErrIncomplete))

	batch[len(batch)-2] ^= 0x20 // a flipped bit
	_, err = log.CheckBatch(batch)
	fmt.Println(errors.Is(err, log.ErrCorrupt))
	// Output:
	// true
	// true
}

func ExampleReadHeader() {
	// Two batches back to back, as in a segment file: scan headers only.
	seg, _ := log.EncodeBatch(nil, []log.Record{{Value: []byte("a")}, {Value: []byte("b")}}, log.BatchOptions{})
	seg, _ = log.EncodeBatch(seg, []log.Record{{Value: []byte("c")}}, log.BatchOptions{BaseOffset: 2})
	for pos := 0; pos < len(seg); {
		h, err := log.ReadHeader(seg[pos:])
		if err != nil {
			panic(err)
		}
		fmt.Printf("position %d: offsets [%d, %d)\n", pos, h.BaseOffset, h.NextOffset())
		pos += h.Size()
	}
	// Output:
	// position 0: offsets [0, 2)
	// position 77: offsets [2, 3)
}
