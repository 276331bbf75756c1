// Command compaction shows a compacted topic: a changelog of user profiles
// where every update and deletion is a record keyed by user id. Cleaning
// keeps only the latest record of each key — a deletion (tombstone) until
// its delete retention has passed — so the topic shrinks to the current
// state, which a reader turns back into a key-value view. Offsets never
// change: compaction leaves gaps.
//
// The store runs on a clock the example moves by hand, so the output is the
// same on every run and nothing sleeps.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
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
		fmt.Fprintln(os.Stderr, "compaction:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "strata-compaction-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	clk := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	s, err := strata.Open(dir, &strata.Options{
		Now: clk.Now, Sync: strata.SyncNever,
		CleanerInterval: -1, RetentionCheckInterval: -1, // this example calls Compact itself
	})
	if err != nil {
		return err
	}
	defer s.Close()

	fmt.Println("== A compacted changelog of user profiles (1 KiB segments)")
	if err := s.CreateTopic("profiles", strata.TopicConfig{
		CleanupPolicy:          strata.CleanupCompact,
		SegmentBytes:           1024,
		MinCleanableDirtyRatio: -1, // clean whenever anything is dirty
		DeleteRetention:        time.Hour,
	}); err != nil {
		return err
	}
	users := []string{"alice", "bob", "carol", "dave"}
	n := 0
	for round := range 10 {
		for _, u := range users {
			clk.Add(time.Minute)
			r := strata.Record{Key: []byte(u), Value: fmt.Appendf(nil, `{"name":%q,"visits":%d}`, u, round+1)}
			if u == "dave" && round == 9 {
				r.Value = nil // dave deletes his account: a tombstone
			}
			if _, err := s.Append(ctx, "profiles", r); err != nil {
				return err
			}
			n++
		}
	}
	_, err = s.Append(ctx, "profiles", strata.Record{Value: []byte("no key")})
	fmt.Println("a record without a key is refused:", errors.Is(err, strata.ErrNoKey))
	describe(s, fmt.Sprintf("after %d updates", n))

	fmt.Println("\n== Compact: the latest record per key stays, offsets do not change")
	st, err := s.Compact(ctx, "profiles")
	if err != nil {
		return err
	}
	fmt.Printf("read %d records, kept %d\n", st.RecordsRead, st.RecordsWritten)
	describe(s, "after compaction")
	if err := show(ctx, s); err != nil {
		return err
	}

	fmt.Println("\n== A new user; the next cleaning copies dave's tombstone and stamps it: it stays an hour")
	if _, err := s.Append(ctx, "profiles", strata.Record{Key: []byte("erin"), Value: []byte(`{"name":"erin","visits":1}`)}); err != nil {
		return err
	}
	if _, err := s.Compact(ctx, "profiles"); err != nil {
		return err
	}
	describe(s, "after the second cleaning")
	if err := show(ctx, s); err != nil {
		return err
	}

	fmt.Println("\n== Two hours and a dozen of erin's visits later, the next cleaning drops the tombstone")
	fmt.Println("(a cleaning needs new records to run: an idle topic keeps its tombstones longer)")
	clk.Add(2 * time.Hour)
	for v := range 12 {
		r := strata.Record{Key: []byte("erin"), Value: fmt.Appendf(nil, `{"name":"erin","visits":%d}`, v+2)}
		if _, err := s.Append(ctx, "profiles", r); err != nil {
			return err
		}
	}
	if _, err := s.Compact(ctx, "profiles"); err != nil {
		return err
	}
	describe(s, "after the third cleaning")
	return show(ctx, s)
}

// show reads the whole topic into a key-value view, as a consumer
// rebuilding the current state would, and prints the records it read.
func show(ctx context.Context, s *strata.Store) error {
	end, err := s.ListOffsets("profiles", 0, strata.Latest)
	if err != nil {
		return err
	}
	view := map[string]string{}
	var offsets []string
	for r, err := range s.Records(ctx, "profiles", 0, 0) {
		if err != nil {
			return err
		}
		offsets = append(offsets, fmt.Sprint(r.Offset))
		if r.Value == nil {
			delete(view, string(r.Key))
		} else {
			view[string(r.Key)] = string(r.Value)
		}
		if r.Offset >= end-1 {
			break
		}
	}
	fmt.Printf("records at offsets %s\n", strings.Join(offsets, ", "))
	keys := make([]string, 0, len(view))
	for k := range view {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Println("current state:")
	for _, k := range keys {
		fmt.Printf("  %-6s %s\n", k, view[k])
	}
	return nil
}

func describe(s *strata.Store, when string) {
	d, err := s.DescribeTopic("profiles")
	if err != nil {
		fmt.Println("describe:", err)
		return
	}
	p := d.Partitions[0]
	fmt.Printf("%s: offsets [%d, %d), %d segment(s), %d bytes\n", when, p.StartOffset, p.EndOffset, p.Segments, p.Bytes)
}
