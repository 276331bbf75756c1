package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// cmdKfake starts a Kafka cluster (franz-go's kfake) in the test process for
// the script, and sets $KAFKA to its address.
func cmdKfake(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: kfake")
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	ts.Check(err)
	ts.Defer(c.Close)
	ts.Setenv("KAFKA", strings.Join(c.ListenAddrs(), ","))
}

// cmdKafkaRecords prints a topic of the script's cluster, read committed:
// a line "partition offset key value" per record, and the partition
// count first.
func cmdKafkaRecords(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: kafkarecords TOPIC")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	brokers := strings.Split(ts.Getenv("KAFKA"), ",")
	adm, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	ts.Check(err)
	defer adm.Close()
	td, err := kadm.NewClient(adm).ListTopics(ctx, args[0])
	ts.Check(err)
	if !td.Has(args[0]) {
		fmt.Fprintln(ts.Stdout(), "0 partitions")
		return
	}
	ends, err := kadm.NewClient(adm).ListCommittedOffsets(ctx, args[0])
	ts.Check(err)
	ts.Check(ends.Error())
	parts := map[int32]kgo.Offset{}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			parts[o.Partition] = kgo.NewOffset().At(0)
			left[o.Partition] = o.Offset
		}
	})
	fmt.Fprintf(ts.Stdout(), "%d partitions\n", len(ends[args[0]]))
	if len(parts) == 0 {
		return
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{args[0]: parts}))
	ts.Check(err)
	defer cl.Close()
	var lines []string
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		ts.Check(ctx.Err())
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := left[r.Partition]
			if !ok {
				return
			}
			if r.Offset+1 >= end {
				delete(left, r.Partition)
			}
			if !r.Attrs.IsControl() {
				lines = append(lines, fmt.Sprintf("%d %d %s %s", r.Partition, r.Offset, r.Key, r.Value))
			}
		})
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Fprintln(ts.Stdout(), l)
	}
}

// cmdKafkaGroup prints a group's committed offsets on the script's
// cluster: "topic partition offset" lines.
func cmdKafkaGroup(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: kafkagroup GROUP")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(ts.Getenv("KAFKA"), ",")...))
	ts.Check(err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, args[0])
	ts.Check(err)
	for _, o := range offs.Sorted() {
		fmt.Fprintf(ts.Stdout(), "%s %d %d\n", o.Topic, o.Partition, o.At)
	}
}
