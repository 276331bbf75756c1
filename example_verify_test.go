package strata_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/stratalog/strata"
)

// exampleVerifyDir writes a closed store of one topic with three records
// in a new directory.
func exampleVerifyDir() string {
	dir, err := os.MkdirTemp("", "strata-verify")
	if err != nil {
		panic(err)
	}
	s, err := strata.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	if err := s.CreateTopic("orders", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	for _, v := range []string{"a", "b", "c"} {
		if _, err := s.AppendTo(context.Background(), "orders", 0, strata.Record{Value: []byte(v), Timestamp: time.UnixMilli(1_700_000_000_000)}); err != nil {
			panic(err)
		}
	}
	if err := s.Close(); err != nil {
		panic(err)
	}
	return dir
}

// Verify checks a directory without opening it as a Store: it takes no
// lock, so it works on a directory a running process holds.
func ExampleVerify() {
	dir := exampleVerifyDir()
	defer os.RemoveAll(dir)

	rep, err := strata.Verify(dir, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Partitions, "partition,", rep.Segments, "segment,", rep.Batches, "batches, damaged:", rep.Damaged())
	// Output:
	// 1 partition, 1 segment, 3 batches, damaged: false
}

// A damaged batch is reported with its file and position, and what
// recovery would do about it.
func ExampleVerifyReport_Damaged() {
	dir := exampleVerifyDir()
	defer os.RemoveAll(dir)
	log := filepath.Join(dir, "orders-0", "00000000000000000000.log")
	data, _ := os.ReadFile(log)
	data[len(data)-1] ^= 1 // the last byte of the third batch
	_ = os.WriteFile(log, data, 0o644)

	rep, err := strata.Verify(dir, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("damaged:", rep.Damaged())
	for _, f := range rep.Findings {
		fmt.Printf("%s at %d: %s\n  %s\n", filepath.Base(f.File), f.Position, f.Problem, f.Recovery)
	}
	// Output:
	// damaged: true
	// 00000000000000000000.log at 138: corrupt batch: crc 0xb11fa45f, computed 0x4374275c
	//   recovery cuts the segment at position 138: 69 bytes would be dropped (1 batch, offset 2)
}
