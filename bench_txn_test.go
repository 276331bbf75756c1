package strata_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stratalog/strata"
)

// BenchmarkTxn commits transactions of 100 records of 100 B spread evenly
// over 1, 10 and 100 partitions of a topic, with a group's offset, under
// SyncNever and SyncAlways, on the operating system's files: api=Txn is
// BeginTxn, the AppendTo calls, CommitOffsets and Commit; api=AppendTo is
// the same records appended with AppendTo, one call per partition, and
// the offset committed with Store.Commit, outside any transaction, in the
// same run, so that a transaction's cost is a ratio. fsyncs/op counts the
// fsyncs of appended data (the Stats of the partitions, the transaction
// state's included). writers=4 runs four goroutines, each with its own
// transactional id, whose commits share fsyncs (group commit).
func BenchmarkTxn(b *testing.B) {
	const records = 100
	recs := benchRecs(records)
	for _, policy := range []strata.SyncPolicy{strata.SyncNever, strata.SyncAlways} {
		for _, parts := range []int{1, 10, 100} {
			open := func(b *testing.B) *strata.Store {
				s, err := strata.Open(b.TempDir(), &strata.Options{Sync: policy, Logger: benchQuiet})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				if err := s.CreateTopic(benchTopic, strata.TopicConfig{Partitions: parts}); err != nil {
					b.Fatal(err)
				}
				if err := s.CreateTopic(benchInput, strata.TopicConfig{}); err != nil {
					b.Fatal(err)
				}
				if _, err := s.AppendTo(benchCtx, benchInput, 0, recs[0]); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(records * 108))
				b.ReportAllocs()
				return s
			}
			per := records / parts
			name := fmt.Sprintf("sync=%s/partitions=%d", policy, parts)
			b.Run("api=AppendTo/"+name, func(b *testing.B) {
				s := open(b)
				before := benchFsyncs(s)
				for b.Loop() {
					for p := range parts {
						if _, err := s.AppendTo(benchCtx, benchTopic, p, recs[p*per:(p+1)*per]...); err != nil {
							b.Fatal(err)
						}
					}
					if err := s.Commit("bench", benchInput, 0, 1, ""); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(benchFsyncs(s)-before)/float64(b.N), "fsyncs/op")
				benchRecordsPerSec(b, records)
			})
			b.Run("api=Txn/"+name, func(b *testing.B) {
				s := open(b)
				before := benchFsyncs(s)
				for b.Loop() {
					benchTxn(b, s, "bench", parts, per, recs)
				}
				b.ReportMetric(float64(benchFsyncs(s)-before)/float64(b.N), "fsyncs/op")
				benchRecordsPerSec(b, records)
			})
			b.Run("api=Txn/"+name+"/writers=4", func(b *testing.B) {
				s := open(b)
				before := benchFsyncs(s)
				var ids atomic.Int64
				b.SetParallelism(4)
				b.RunParallel(func(pb *testing.PB) {
					id := fmt.Sprintf("bench-%d", ids.Add(1))
					for pb.Next() {
						benchTxn(b, s, id, parts, per, recs)
					}
				})
				b.ReportMetric(float64(benchFsyncs(s)-before)/float64(b.N), "fsyncs/op")
				benchRecordsPerSec(b, records)
			})
		}
	}
}

// benchTxn commits one transaction of id with per records of recs to each
// of the topic's first parts partitions.
func benchTxn(b *testing.B, s *strata.Store, id string, parts, per int, recs []strata.Record) {
	tx, err := s.BeginTxn(benchCtx, strata.TxnOptions{ID: id})
	if err != nil {
		b.Fatal(err)
	}
	for p := range parts {
		if err := tx.AppendTo(benchCtx, benchTopic, p, recs[p*per:(p+1)*per]...); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.CommitOffsets(benchCtx, id, map[strata.TopicPartition]int64{{Topic: benchInput, Partition: 0}: 1}); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(benchCtx); err != nil {
		b.Fatal(err)
	}
}

// benchInput is the topic whose offset BenchmarkTxn's transactions commit.
const benchInput = "bench-in"

// benchFsyncs is the number of fsyncs of appended data the store's
// partitions have made.
func benchFsyncs(s *strata.Store) int64 {
	var n int64
	for _, parts := range s.Stats().Topics {
		for _, p := range parts {
			n += p.Fsyncs
		}
	}
	return n
}
