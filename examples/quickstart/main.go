// Command quickstart is a tour of Strata: it opens a store, creates a topic
// of three partitions, appends JSON orders keyed by order id, reads them back
// with two independent readers, shows that a key always lands in the
// partition Kafka's murmur2 partitioner picks, and reopens the store to show
// that the data survived.
//
//	go run ./examples/quickstart            # in a temporary directory, removed at the end
//	go run ./examples/quickstart -dir DIR   # in DIR, kept
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stratalog/strata"
)

const (
	topicName  = "sales-events"
	partitions = 3
)

// Order is one event in an order's life: created, paid or shipped.
type Order struct {
	ID     string `json:"id"`
	Event  string `json:"event"`
	Amount int    `json:"amount_cents,omitempty"`
}

// base is the time of the first event. The events carry their own
// timestamps, and the store gets a clock fixed just after them: the output is
// the same on every run, and the store (its retention, its check against
// timestamps from the future) sees the events as recent.
var (
	base = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	opts = &strata.Options{Now: func() time.Time { return base.Add(time.Hour) }}
)

// events are the orders' events in the order they happen, one minute apart.
var events = []Order{
	{ID: "order-1001", Event: "created", Amount: 2599},
	{ID: "order-1003", Event: "created", Amount: 1250},
	{ID: "order-1001", Event: "paid", Amount: 2599},
	{ID: "order-1004", Event: "created", Amount: 9900},
	{ID: "order-1003", Event: "paid", Amount: 1250},
	{ID: "order-1001", Event: "shipped"},
	{ID: "order-1009", Event: "created", Amount: 450},
	{ID: "order-1004", Event: "paid", Amount: 9900},
	{ID: "order-1003", Event: "shipped"},
	{ID: "order-1009", Event: "paid", Amount: 450},
}

func main() {
	dir := flag.String("dir", "", "store directory (default: a temporary directory, removed at the end)")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "strata-quickstart-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	ctx := context.Background()

	heading("1. Open a store and create a topic")
	s, err := strata.Open(dir, opts)
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }() // a no-op once closed below
	err = s.CreateTopic(topicName, strata.TopicConfig{Partitions: partitions})
	if errors.Is(err, strata.ErrTopicExists) {
		fmt.Printf("topic %s exists already (-dir was used before): appending to it\n", topicName)
	} else if err != nil {
		return err
	} else {
		fmt.Printf("created topic %s with %d partitions\n", topicName, partitions)
	}

	heading("2. Append orders, keyed by order id")
	placed := map[string][]int{} // order id → the partition of each of its events
	for i, o := range events {
		value, err := json.Marshal(o)
		if err != nil {
			return err
		}
		pos, err := s.Append(ctx, topicName, strata.Record{
			Key:       []byte(o.ID),
			Value:     value,
			Timestamp: base.Add(time.Duration(i) * time.Minute),
		})
		if err != nil {
			return err
		}
		fmt.Printf("%-10s %-7s -> partition %d, offset %d\n", o.ID, o.Event, pos[0].Partition, pos[0].Offset)
		placed[o.ID] = append(placed[o.ID], pos[0].Partition)
	}

	heading("3. The same key always lands in the same partition")
	for _, id := range slices.Sorted(maps.Keys(placed)) {
		part, err := s.PartitionFor(topicName, []byte(id))
		if err != nil {
			return err
		}
		fmt.Printf("%-10s events in partitions %v; Kafka's murmur2 partitioner: PartitionFor(%q, %q) = %d\n",
			id, placed[id], topicName, id, part)
	}

	heading("4. Reader A: every partition from offset 0 (the Records iterator)")
	for p := range partitions {
		end, err := s.ListOffsets(topicName, p, strata.Latest)
		if err != nil {
			return err
		}
		fmt.Printf("partition %d, offsets [0, %d):\n", p, end)
		if end == 0 {
			continue
		}
		// Records tails the partition (it waits for more at the end), so
		// stop at the end offset we looked up.
		for r, err := range s.Records(ctx, topicName, p, 0) {
			if err != nil {
				return err
			}
			fmt.Printf("  offset %d  %s  key=%s  value=%s\n", r.Offset, r.Timestamp.UTC().Format("15:04"), r.Key, r.Value)
			if r.Offset+1 == end {
				break
			}
		}
	}

	since := base.Add(8 * time.Minute)
	heading(fmt.Sprintf("5. Reader B: only events from %s on (ListOffsets AtTime, then Read)", since.Format("15:04")))
	for p := range partitions {
		from, err := s.ListOffsets(topicName, p, strata.AtTime(since))
		if err != nil {
			return err
		}
		if from < 0 { // no record that late in this partition
			fmt.Printf("partition %d: nothing since %s\n", p, since.Format("15:04"))
			continue
		}
		recs, err := s.Read(ctx, topicName, p, from, 100)
		if err != nil {
			return err
		}
		fmt.Printf("partition %d: from offset %d\n", p, from)
		for _, r := range recs {
			var o Order
			if err := json.Unmarshal(r.Value, &o); err != nil {
				return err
			}
			fmt.Printf("  offset %d  %s  key=%s  event=%s\n", r.Offset, r.Timestamp.UTC().Format("15:04"), r.Key, o.Event)
		}
	}

	heading("6. Close, reopen: the data is still there")
	if err := s.Close(); err != nil {
		return err
	}
	if err := printTree(dir); err != nil {
		return err
	}
	s, err = strata.Open(dir, opts)
	if err != nil {
		return err
	}
	desc, err := s.DescribeTopic(topicName)
	if err != nil {
		return err
	}
	fmt.Printf("reopened; DescribeTopic(%q):\n", topicName)
	for _, p := range desc.Partitions {
		fmt.Printf("  partition %d: offsets [%d, %d), %d segment, %d records from %s to %s\n",
			p.Partition, p.StartOffset, p.EndOffset, p.Segments, p.EndOffset-p.StartOffset,
			p.OldestTimestamp.UTC().Format("15:04"), p.NewestTimestamp.UTC().Format("15:04"))
	}
	last := events[len(events)-1]
	part, err := s.PartitionFor(topicName, []byte(last.ID))
	if err != nil {
		return err
	}
	end := desc.Partitions[part].EndOffset
	recs, err := s.Read(ctx, topicName, part, end-1, 1)
	if err != nil {
		return err
	}
	fmt.Printf("last record of partition %d: offset %d  key=%s  value=%s\n", part, recs[0].Offset, recs[0].Key, recs[0].Value)
	return s.Close()
}

func heading(s string) {
	fmt.Printf("\n== %s\n", s)
}

// printTree lists the store's files, one partition directory at a time.
func printTree(dir string) error {
	fmt.Println("files after Close:")
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		depth := strings.Count(rel, string(filepath.Separator))
		name := d.Name()
		if d.IsDir() {
			name += "/"
		}
		fmt.Printf("  %s%s\n", strings.Repeat("  ", depth), name)
		return nil
	})
}
