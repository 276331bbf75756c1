package strata_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/group"
)

// The consumer-group benchmarks: commits (to __consumer_offsets), a group
// polling a filled topic, and a rebalance.
//
//	go test -run '^$' -bench 'Commit|Poll|Rebalance' -count 6 . | tee new.txt   # then benchstat new.txt

// groupBenchOpen opens a store in a new temporary directory with the given
// options, a quiet logger and no background retention, closed when b ends.
func groupBenchOpen(b *testing.B, opts strata.Options) *strata.Store {
	b.Helper()
	opts.Logger = slog.New(slog.DiscardHandler)
	opts.RetentionCheckInterval = -1
	s, err := strata.Open(b.TempDir(), &opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Error(err)
		}
	})
	return s
}

// groupBenchFill appends n records of 100 B (8-byte keys) to every one of
// the topic's parts partitions, in batches of 100.
func groupBenchFill(b *testing.B, s *strata.Store, topicName string, parts, n int) {
	b.Helper()
	recs := make([]strata.Record, 100)
	for i := range recs {
		recs[i] = strata.Record{Key: fmt.Appendf(nil, "k%07d", i), Value: make([]byte, 100)}
	}
	for p := range parts {
		for left := n; left > 0; left -= len(recs) {
			if _, err := s.AppendTo(context.Background(), topicName, p, recs[:min(left, len(recs))]...); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// groupBenchSync polls c once with a context that has already ended: Poll
// checks in with the group (taking and giving back partitions, running the
// callbacks) and returns at once, without fetching or waiting.
func groupBenchSync(b *testing.B, c *strata.Consumer) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Poll(ctx); err != nil && !errors.Is(err, context.Canceled) {
		b.Fatal(err)
	}
}

// BenchmarkCommit commits offsets of a topic of 64 partitions (1000
// records each) to __consumer_offsets, under SyncNever and SyncAlways:
// Store.Commit of one offset per call (a standalone commit, one record
// batch each), and Consumer.CommitOffsets of all 64 partitions per call
// (one batch of 64 records) by the group's only consumer. offsets/s counts
// the offsets committed.
func BenchmarkCommit(b *testing.B) {
	const topicName, parts, perPart = "t", 64, 1000
	for _, sync := range []struct {
		name   string
		policy strata.SyncPolicy
	}{{"never", strata.SyncNever}, {"always", strata.SyncAlways}} {
		b.Run(fmt.Sprintf("api=store/offsets=1/sync=%s", sync.name), func(b *testing.B) {
			s := groupBenchOpen(b, strata.Options{Sync: sync.policy})
			if err := s.CreateTopic(topicName, strata.TopicConfig{Partitions: parts}); err != nil {
				b.Fatal(err)
			}
			groupBenchFill(b, s, topicName, parts, perPart)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := s.Commit("g", topicName, i%parts, int64(i/parts%(perPart+1)), ""); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "offsets/s")
		})
		b.Run(fmt.Sprintf("api=consumer/offsets=%d/sync=%s", parts, sync.name), func(b *testing.B) {
			s := groupBenchOpen(b, strata.Options{Sync: sync.policy})
			if err := s.CreateTopic(topicName, strata.TopicConfig{Partitions: parts}); err != nil {
				b.Fatal(err)
			}
			groupBenchFill(b, s, topicName, parts, perPart)
			c, err := s.Consumer("g", []string{topicName}, strata.ConsumerOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			groupBenchSync(b, c)
			if n := len(c.Assignment()); n != parts {
				b.Fatalf("the consumer owns %d partitions, want %d", n, parts)
			}
			offsets := make(map[strata.TopicPartition]int64, parts)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				for p := range parts {
					offsets[strata.TopicPartition{Topic: topicName, Partition: p}] = int64(i % (perPart + 1))
				}
				if err := c.CommitOffsets(context.Background(), offsets); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)*parts/b.Elapsed().Seconds(), "offsets/s")
		})
	}
}

// BenchmarkPoll has a new group read, per op, every record of a topic of 4
// partitions filled once with 1 M records of 100 B (SyncNever): one
// consumer polling all four partitions, and four consumers, one partition
// and one goroutine each. Poll returns up to 500 records (the default
// MaxPollRecords); nothing is committed. The op includes the consumers'
// joining and closing.
func BenchmarkPoll(b *testing.B) {
	const topicName, parts, total = "t", 4, 1_000_000
	s := groupBenchOpen(b, strata.Options{Sync: strata.SyncNever})
	if err := s.CreateTopic(topicName, strata.TopicConfig{Partitions: parts}); err != nil {
		b.Fatal(err)
	}
	groupBenchFill(b, s, topicName, parts, total/parts)
	d, err := s.DescribeTopic(topicName)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, p := range d.Partitions {
		size += p.Bytes
	}
	for _, consumers := range []int{1, 4} {
		b.Run(fmt.Sprintf("consumers=%d/records=1M", consumers), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			op := 0
			for b.Loop() {
				op++
				if n := groupBenchConsume(b, s, fmt.Sprintf("g%d", op), topicName, consumers, total); n != total {
					b.Fatalf("the group read %d records, want %d", n, total)
				}
			}
			b.ReportMetric(float64(b.N)*total/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// groupBenchConsume has a new group of n consumers, one goroutine each,
// poll topicName from the earliest offsets until together they have read
// total records, and returns how many they read.
func groupBenchConsume(b *testing.B, s *strata.Store, groupName, topicName string, n int, total int64) int64 {
	cs := make([]*strata.Consumer, n)
	for i := range cs {
		c, err := s.Consumer(groupName, []string{topicName}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
		if err != nil {
			b.Fatal(err)
		}
		cs[i] = c
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var read atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, c := range cs {
		wg.Go(func() {
			defer func() { errs <- c.Close() }()
			for {
				msgs, err := c.Poll(ctx)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					errs <- err
					cancel()
					return
				}
				if read.Add(int64(len(msgs))) >= total {
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return read.Load()
}

// BenchmarkRebalance times a rebalance: per op, a new group of 4
// consumers owning the 64 (empty) partitions of a topic between them, then
// a 5th joins; the op is the time from its joining until every consumer's
// Assignment has converged to the new target, the consumers polling in
// turn. poll=done polls with a context that has already ended (each Poll
// only checks in with the group: the cost of the protocol and the
// assignor); poll=1ms with a 1 ms timeout, which an empty partition waits
// out (what a consumer on an idle topic sees). polls/op counts the Poll
// calls it took.
func BenchmarkRebalance(b *testing.B) {
	const topicName, parts, members = "t", 64, 4
	for _, assignor := range []struct {
		name string
		a    group.Assignor
	}{{"range", group.Range()}, {"sticky", group.Sticky()}} {
		for _, wait := range []struct {
			name string
			d    time.Duration
		}{{"done", 0}, {"1ms", time.Millisecond}} {
			b.Run(fmt.Sprintf("assignor=%s/members=%d/partitions=%d/poll=%s", assignor.name, members, parts, wait.name), func(b *testing.B) {
				s := groupBenchOpen(b, strata.Options{Sync: strata.SyncNever, Assignor: assignor.a})
				if err := s.CreateTopic(topicName, strata.TopicConfig{Partitions: parts}); err != nil {
					b.Fatal(err)
				}
				poll := func(c *strata.Consumer) {
					if wait.d == 0 {
						groupBenchSync(b, c)
						return
					}
					ctx, cancel := context.WithTimeout(context.Background(), wait.d)
					defer cancel()
					if _, err := c.Poll(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
						b.Fatal(err)
					}
				}
				// converge polls cs in turn, a round at a time, until they
				// own every partition between them, and returns the number
				// of Poll calls. After a round with no rebalance in it,
				// every consumer has given back what it was told to, so
				// what they own is within the target, and owning every
				// partition means owning exactly the target.
				converge := func(cs []*strata.Consumer, poll func(*strata.Consumer)) int {
					for rounds := 1; ; rounds++ {
						owned := 0
						for _, c := range cs {
							poll(c)
						}
						for _, c := range cs {
							owned += len(c.Assignment())
						}
						if owned == parts {
							return rounds * len(cs)
						}
						if rounds > 100 {
							b.Fatalf("no convergence after %d rounds: %d of %d partitions owned", rounds, owned, parts)
						}
					}
				}
				b.ReportAllocs()
				polls, op := 0, 0
				for b.Loop() {
					b.StopTimer()
					op++
					groupName := fmt.Sprintf("g%d", op)
					cs := make([]*strata.Consumer, 0, members+1)
					for range members {
						c, err := s.Consumer(groupName, []string{topicName}, strata.ConsumerOptions{})
						if err != nil {
							b.Fatal(err)
						}
						cs = append(cs, c)
					}
					converge(cs, func(c *strata.Consumer) { groupBenchSync(b, c) })
					b.StartTimer()

					c, err := s.Consumer(groupName, []string{topicName}, strata.ConsumerOptions{})
					if err != nil {
						b.Fatal(err)
					}
					cs = append(cs, c)
					polls += converge(cs, poll)

					b.StopTimer()
					for _, c := range cs {
						if err := c.Close(); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(polls)/float64(b.N), "polls/op")
			})
		}
	}
}
