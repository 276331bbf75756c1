package strata_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// BenchmarkTxn commits transactions of 100 records of 100 B spread evenly
// over 1, 10 and 100 partitions of a topic, with a group's offset, under
// SyncNever, SyncEvery(1 s) and SyncAlways, on the operating system's
// files: api=Txn is
// BeginTxn, the AppendTo calls, CommitOffsets and Commit; api=AppendTo is
// the same records appended with AppendTo, one call per partition, and
// the offset committed with Store.Commit, outside any transaction, in the
// same run, so that a transaction's cost is a ratio. fsyncs/op counts
// every fsync (of a file or a directory) and msync the store made, through
// a vfs wrapper; data-fsyncs/op those of appended data (the Stats of the
// partitions, the transaction state's and the offsets' included).
// writers=8 runs eight goroutines, each with its own transactional id,
// whose commits share fsyncs (group commit): their fsyncs/op is per
// transaction, to be set against the single writer's.
//
//	go test -run '^$' -bench 'BenchmarkTxn$' -benchtime 200x -count 6 . | tee new.txt
func BenchmarkTxn(b *testing.B) {
	const records = 100
	recs := benchRecs(records)
	for _, policy := range []strata.SyncPolicy{strata.SyncNever, strata.SyncEvery(time.Second), strata.SyncAlways} {
		for _, parts := range []int{1, 10, 100} {
			open := func(b *testing.B) (*strata.Store, syncCountFS) {
				fsys := newSyncCountFS(vfs.OS)
				s, err := strata.Open(b.TempDir(), &strata.Options{FS: fsys, Sync: policy, Logger: benchQuiet})
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
				return s, fsys
			}
			// measure runs the benchmark's loop and reports its fsyncs.
			measure := func(b *testing.B, s *strata.Store, fsys syncCountFS, loop func()) {
				before, dataBefore := fsys.syncs(), benchFsyncs(s)
				loop()
				b.ReportMetric(float64(fsys.syncs()-before)/float64(b.N), "fsyncs/op")
				b.ReportMetric(float64(benchFsyncs(s)-dataBefore)/float64(b.N), "data-fsyncs/op")
				benchRecordsPerSec(b, records)
			}
			per := records / parts
			name := fmt.Sprintf("sync=%s/partitions=%d", policy, parts)
			b.Run("api=AppendTo/"+name, func(b *testing.B) {
				s, fsys := open(b)
				measure(b, s, fsys, func() {
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
				})
			})
			b.Run("api=Txn/"+name, func(b *testing.B) {
				s, fsys := open(b)
				measure(b, s, fsys, func() {
					for b.Loop() {
						if err := benchTxn(s, "bench", parts, per, recs); err != nil {
							b.Fatal(err)
						}
					}
				})
			})
			b.Run("api=Txn/"+name+"/writers=8", func(b *testing.B) {
				s, fsys := open(b)
				measure(b, s, fsys, func() {
					var (
						wg   sync.WaitGroup
						done atomic.Int64
					)
					b.ResetTimer()
					for w := range 8 {
						wg.Go(func() {
							id := fmt.Sprint("bench-", w)
							for done.Add(1) <= int64(b.N) {
								if err := benchTxn(s, id, parts, per, recs); err != nil {
									b.Error(err)
									return
								}
							}
						})
					}
					wg.Wait()
				})
			})
		}
	}
}

// benchTxn commits one transaction of id with per records of recs to each
// of the topic's first parts partitions, and an offset of benchInput.
func benchTxn(s *strata.Store, id string, parts, per int, recs []strata.Record) error {
	tx, err := s.BeginTxn(benchCtx, strata.TxnOptions{ID: id})
	if err != nil {
		return err
	}
	for p := range parts {
		if err := tx.AppendTo(benchCtx, benchTopic, p, recs[p*per:(p+1)*per]...); err != nil {
			return err
		}
	}
	if err := tx.CommitOffsets(benchCtx, id, map[strata.TopicPartition]int64{{Topic: benchInput, Partition: 0}: 1}); err != nil {
		return err
	}
	return tx.Commit(benchCtx)
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
