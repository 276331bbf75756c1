package bench

import (
	"context"
	"encoding/binary"
	"log/slog"
	"path/filepath"
	"runtime"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/bench/peers"
	"github.com/stratalog/strata/internal/cputime"
)

// reopenRecords is the size of the log the reopen benchmark opens.
const reopenRecords = 1_000_000

// benchRecord returns the key (16 B) and value (100 B) of the workloads.
func benchRecord() (key, value []byte) {
	return make([]byte, 16), make([]byte, 100)
}

// BenchmarkReopen reopens a log of 1 M records (16 B key, 100 B value),
// closed cleanly, once per op: Open alone (the Close after it untimed), and
// Open with a point read of the last record and Close. Strata under
// SyncNever and under its default policy (SyncEvery, whose Open makes the
// directory's clean-shutdown state durable before anything is written);
// bbolt with its defaults (the lookup in a read transaction); and, for the
// whole cycle on Linux, the layout-floor baseline on Strata's log (the
// system calls and reads of its files alone, the least any Open of them
// and read of the last record costs), as BenchmarkReopenCold runs it in a
// new process. The whole cycle also reports the process's CPU time per op
// (cpu-ns/op), steadier on a shared machine.
func BenchmarkReopen(b *testing.B) {
	key, value := benchRecord()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	last := int64(reopenRecords - 1)

	dir := filepath.Join(b.TempDir(), "strata")
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.CreateTopic(reopenTopic, strata.TopicConfig{}); err != nil {
		b.Fatal(err)
	}
	recs := make([]strata.Record, 1000)
	for i := range recs {
		recs[i] = strata.Record{Key: key, Value: value}
	}
	for range reopenRecords / len(recs) {
		if _, err := s.AppendTo(ctx, reopenTopic, 0, recs...); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}

	path := filepath.Join(b.TempDir(), "bolt.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	bucket := []byte("log")
	for i := 0; i < reopenRecords; {
		if err := db.Update(func(tx *bolt.Tx) error {
			bk, err := tx.CreateBucketIfNotExists(bucket)
			if err != nil {
				return err
			}
			bk.FillPercent = 1 // keys are appended in order
			for end := i + 10000; i < end; i++ {
				if err := bk.Put(binary.BigEndian.AppendUint64(nil, uint64(i)), append(key[:len(key):len(key)], value...)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}

	strataCycle := func(sync strata.SyncPolicy, get bool) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			opts := &strata.Options{Sync: sync, Logger: quiet}
			cpu0, ok0 := cputime.Process()
			for range b.N {
				s, err := strata.Open(dir, opts)
				if err != nil {
					b.Fatal(err)
				}
				if !get {
					b.StopTimer()
				} else if r, err := s.Get(reopenTopic, 0, last); err != nil || len(r.Value) != len(value) {
					b.Fatal(len(r.Value), err)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			if get {
				reportCPU(b, cpu0, ok0)
			}
		}
	}
	boltCycle := func(get bool) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			k := binary.BigEndian.AppendUint64(nil, uint64(last))
			cpu0, ok0 := cputime.Process()
			for range b.N {
				db, err := bolt.Open(path, 0o600, nil)
				if err != nil {
					b.Fatal(err)
				}
				if !get {
					b.StopTimer()
				} else if err := db.View(func(tx *bolt.Tx) error {
					if v := tx.Bucket(bucket).Get(k); len(v) != len(key)+len(value) {
						b.Fatal(len(v))
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			if get {
				reportCPU(b, cpu0, ok0)
			}
		}
	}
	b.Run("op=open/log=strata-syncnever", strataCycle(strata.SyncNever, false))
	b.Run("op=open/log=strata-default", strataCycle(strata.SyncPolicy{}, false))
	b.Run("op=open/log=bbolt", boltCycle(false))
	b.Run("op=open+get+close/log=strata-syncnever", strataCycle(strata.SyncNever, true))
	b.Run("op=open+get+close/log=strata-default", strataCycle(strata.SyncPolicy{}, true))
	b.Run("op=open+get+close/log=bbolt", boltCycle(true))
	if runtime.GOOS == "linux" {
		b.Run("op=open+get+close/log=layout-floor", func(b *testing.B) {
			peer := findPeer(b, "layout-floor")
			b.ReportAllocs()
			cpu0, ok0 := cputime.Process()
			for range b.N {
				l, err := peer.Open(dir, peers.Options{})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				if err := l.Get(last, func(_, v []byte) { n = len(v) }); err != nil || n != len(value) {
					b.Fatal(n, err)
				}
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu0, ok0)
		})
	}
}

// reopenTopic is the topic of BenchmarkReopen's Strata log: the one the
// strata peer writes, so that the layout-floor peer reopens it.
const reopenTopic = "log"
