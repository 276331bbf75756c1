// Command retention shows Kafka's retention in Strata: a topic that keeps
// records for one second (of record time) in small segments. Old offsets
// vanish a whole segment at a time, the start offset moves, and a reader
// that was behind resets to the earliest offset, as a Kafka consumer with
// auto.offset.reset=earliest does.
//
// The store runs on a clock the example moves by hand, so the output is the
// same on every run and nothing sleeps.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/stratalog/strata"
)

// clock is a clock moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "retention:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "strata-retention-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	clk := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	s, err := strata.Open(dir, &strata.Options{
		Now:                    clk.Now,
		Sync:                   strata.SyncNever,
		RetentionCheckInterval: -1, // this example calls EnforceRetention itself
	})
	if err != nil {
		return err
	}
	defer s.Close()

	fmt.Println("== A topic keeping one second of records, in 1 KiB segments")
	if err := s.CreateTopic("sensor", strata.TopicConfig{
		Retention:     time.Second,
		SegmentBytes:  1024,
		MaxBatchBytes: 512,
	}); err != nil {
		return err
	}

	// 40 readings, one every 100 ms of record time: 4 seconds in all.
	for i := range 40 {
		clk.Add(100 * time.Millisecond)
		r := strata.Record{Key: []byte("sensor-1"), Value: fmt.Appendf(nil, "reading %02d", i)}
		if _, err := s.Append(ctx, "sensor", r); err != nil {
			return err
		}
	}
	describe(s, "after 40 readings")

	// A reader processed the first five readings and then stalled.
	next := int64(5)
	fmt.Printf("\na slow reader will continue at offset %d\n", next)

	fmt.Println("\n== Retention runs: segments whose newest record is over a second old go")
	n, err := s.EnforceRetention(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("deleted %d segments\n", n)
	describe(s, "after retention")

	fmt.Println("\n== The slow reader comes back")
	_, err = s.Read(ctx, "sensor", 0, next, 10)
	if errors.Is(err, strata.ErrOffsetOutOfRange) {
		earliest, err := s.ListOffsets("sensor", 0, strata.Earliest)
		if err != nil {
			return err
		}
		fmt.Printf("offset %d is gone (out of range): reset to the earliest offset, %d\n", next, earliest)
		next = earliest
	} else if err != nil {
		return err
	}
	recs, err := s.Read(ctx, "sensor", 0, next, 100)
	if err != nil {
		return err
	}
	fmt.Printf("read %d readings, offsets %d to %d: %q ... %q\n",
		len(recs), recs[0].Offset, recs[len(recs)-1].Offset, recs[0].Value, recs[len(recs)-1].Value)

	fmt.Println("\n== Ten seconds of silence: everything expires, one empty segment stays")
	clk.Add(10 * time.Second)
	if _, err := s.EnforceRetention(ctx); err != nil {
		return err
	}
	describe(s, "after everything expired")
	return nil
}

func describe(s *strata.Store, when string) {
	d, err := s.DescribeTopic("sensor")
	if err != nil {
		fmt.Println("describe:", err)
		return
	}
	p := d.Partitions[0]
	fmt.Printf("%s: offsets [%d, %d), %d segment(s), %d bytes\n", when, p.StartOffset, p.EndOffset, p.Segments, p.Bytes)
}
