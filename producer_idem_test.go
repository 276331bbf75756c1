package strata_test

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// idemStore opens a store on a new vfs.Mem with one topic "t" of cfg, and
// returns the Mem too.
func idemStore(t *testing.T, cfg strata.TopicConfig) (*strata.Store, *vfs.Mem) {
	t.Helper()
	m := vfs.NewMem()
	s, err := strata.Open("data", onFS(m, &strata.Options{Sync: strata.SyncNever, RetentionCheckInterval: -1, CleanerInterval: -1}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.CreateTopic("t", cfg))
	return s, m
}

// batchHeaders returns the headers of the batches in partition part of
// topic "t", in offset order, read from its segment files.
func batchHeaders(t *testing.T, m *vfs.Mem, part int) []log.BatchHeader {
	t.Helper()
	dir := path.Join("data", "t-"+string(rune('0'+part)))
	names, err := m.ReadDir(dir)
	require.NoError(t, err)
	slices.Sort(names)
	var hs []log.BatchHeader
	for _, name := range names {
		if !strings.HasSuffix(name, ".log") {
			continue
		}
		data, err := vfs.ReadFile(m, path.Join(dir, name))
		require.NoError(t, err)
		for pos := 0; pos < len(data); {
			h, err := log.ReadHeader(data[pos:])
			if err != nil || h.Length == 0 {
				break // the zeros past the end of a preallocated segment
			}
			hs = append(hs, h)
			pos += h.Size()
		}
	}
	return hs
}

// failLogWrites returns an injector that fails the first n writes (write
// calls or copies into a mapping) of a .log file once armed.
func failLogWrites(n int64, armed *atomic.Bool) vfs.Injector {
	var failed atomic.Int64
	return func(op vfs.Op, p string) error {
		if !armed.Load() || (op != vfs.OpWrite && op != vfs.OpWriteMap) || !strings.HasSuffix(p, ".log") {
			return nil
		}
		if failed.Add(1) <= n {
			return vfs.ErrInjected
		}
		return nil
	}
}

// TestProducerStampsBatches: an idempotent Producer's batches carry its
// producer id, epoch 0 and, per partition, the sequence of their first
// record; two Producers have two ids; a Producer with DisableIdempotence
// stamps nothing and takes no id (the store has no producer id file).
func TestProducerStampsBatches(t *testing.T) {
	t.Run("idempotent", func(t *testing.T) {
		s, m := idemStore(t, strata.TopicConfig{Partitions: 2})
		ids := map[int64]bool{}
		for range 2 {
			p := s.Producer(strata.ProducerOptions{Linger: -1, BatchBytes: 300})
			for i := range 40 {
				require.NoError(t, p.Produce(ctx, "t", strata.Record{Key: []byte{byte(i % 5)}, Value: make([]byte, 50)}, nil))
			}
			require.NoError(t, p.Close())
		}
		for part := range 2 {
			seq := map[int64]int32{} // per producer id, the next sequence
			for _, h := range batchHeaders(t, m, part) {
				require.GreaterOrEqual(t, h.ProducerID, int64(0))
				require.Equal(t, int16(0), h.ProducerEpoch)
				require.Equal(t, seq[h.ProducerID], h.BaseSequence, "batch at offset %d", h.BaseOffset)
				seq[h.ProducerID] += h.LastOffsetDelta + 1
				ids[h.ProducerID] = true
			}
		}
		require.Len(t, ids, 2, "each Producer has an id of its own")
	})
	t.Run("disabled", func(t *testing.T) {
		s, m := idemStore(t, strata.TopicConfig{})
		p := s.Producer(strata.ProducerOptions{DisableIdempotence: true})
		for i := range 10 {
			require.NoError(t, p.Produce(ctx, "t", value100(i), nil))
		}
		require.NoError(t, p.Close())
		hs := batchHeaders(t, m, 0)
		require.NotEmpty(t, hs)
		for _, h := range hs {
			require.Equal(t, int64(-1), h.ProducerID)
			require.Equal(t, int16(-1), h.ProducerEpoch)
			require.Equal(t, int32(-1), h.BaseSequence)
		}
		_, err := m.Stat(path.Join("data", strata.ProducerIDsFile))
		require.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("no id before the first Produce", func(t *testing.T) {
		s, m := idemStore(t, strata.TopicConfig{})
		p := s.Producer(strata.ProducerOptions{})
		require.NoError(t, p.Flush(ctx))
		file := path.Join("data", strata.ProducerIDsFile)
		_, err := m.Stat(file)
		require.ErrorIs(t, err, fs.ErrNotExist)
		require.NoError(t, p.Produce(ctx, "t", value100(0), nil))
		_, err = m.Stat(file)
		require.NoError(t, err)
		require.NoError(t, p.Close())
	})
}

// TestProducerRetriesIOError: a batch whose append fails with an I/O error
// is appended again after RetryBackoff, and every record lands once, at
// the Position its callback reports. Without idempotence the batch fails.
func TestProducerRetriesIOError(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     strata.ProducerOptions
		failures int64
		wantErr  bool
		wantWait time.Duration
		linger   time.Duration // between the Produce calls and the Flush
	}{
		{"idempotent/one failure", strata.ProducerOptions{}, 1, false, 100 * time.Millisecond, 0},
		{"idempotent/three failures", strata.ProducerOptions{RetryBackoff: time.Second}, 3, false, 3 * time.Second, 0},
		{"idempotent/past the delivery timeout", strata.ProducerOptions{RetryBackoff: time.Second, DeliveryTimeout: 2500 * time.Millisecond}, 5, true, 2500 * time.Millisecond, 0},
		// Counted from the first Produce, not from the Flush that ships
		// the batch a second later: failed at 1 s, retried at 1.5 s, over.
		{"idempotent/the delivery timeout counts the linger", strata.ProducerOptions{RetryBackoff: time.Second, DeliveryTimeout: 1500 * time.Millisecond}, 5, true, 1500 * time.Millisecond, time.Second},
		{"idempotent/no retries", strata.ProducerOptions{DeliveryTimeout: -1}, 1, true, 0, 0},
		{"not idempotent", strata.ProducerOptions{DisableIdempotence: true}, 1, true, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, m := idemStore(t, strata.TopicConfig{})
				var armed atomic.Bool
				m.SetInjector(failLogWrites(tc.failures, &armed))
				// Only the Flush ships, so that the three records are one
				// batch, the one the injected failures hit: with no linger
				// the sender could take the first record alone, and the
				// other two would land in a batch no failure reaches.
				opts := tc.opts
				opts.Linger = time.Hour
				p := s.Producer(opts)
				defer p.Close()
				var o outcomes
				armed.Store(true)
				start := time.Now()
				for i := range 3 {
					require.NoError(t, p.Produce(ctx, "t", value100(i), o.callback(i)))
				}
				time.Sleep(tc.linger)
				require.NoError(t, p.Flush(ctx))
				require.Equal(t, tc.wantWait, time.Since(start))
				require.Equal(t, 3, o.len())
				got, err := s.Read(ctx, "t", 0, 0, 10)
				require.NoError(t, err)
				if tc.wantErr {
					for i := range 3 {
						require.ErrorIs(t, o.errs[i], vfs.ErrInjected)
						require.Equal(t, int64(-1), o.pos[i].Offset)
					}
					require.Empty(t, got)
					return
				}
				for i := range 3 {
					require.NoError(t, o.errs[i])
					require.Equal(t, strata.Position{Partition: 0, Offset: int64(i)}, o.pos[i])
				}
				require.Len(t, got, 3, "every record once")
			})
		})
	}
}

// TestProducerNewEpochAfterFailure: after a batch fails for good, the
// producer moves to epoch 1 with its sequences at 0, so the next batches
// are appended (a partition refuses a sequence gap), a batch shipped, and
// stamped, before the failure included.
func TestProducerNewEpochAfterFailure(t *testing.T) {
	s, m := idemStore(t, strata.TopicConfig{})
	var armed atomic.Bool
	m.SetInjector(failLogWrites(1, &armed))
	// A batch per record: each is shipped as soon as it is produced.
	p := s.Producer(strata.ProducerOptions{Linger: time.Hour, BatchBytes: 1, DeliveryTimeout: -1})
	defer p.Close()
	failing, release := make(chan struct{}), make(chan struct{})
	strata.SetAfterAppend(p, func(err error) error {
		if err != nil {
			close(failing)
			<-release // until the next batch is shipped
		}
		return err
	})
	var o outcomes
	require.NoError(t, p.Produce(ctx, "t", value100(0), o.callback(0)))
	require.NoError(t, p.Flush(ctx))
	armed.Store(true)
	require.NoError(t, p.Produce(ctx, "t", value100(1), o.callback(1)))
	<-failing
	require.NoError(t, p.Produce(ctx, "t", value100(2), o.callback(2)))
	close(release)
	require.NoError(t, p.Flush(ctx))
	require.NoError(t, p.Produce(ctx, "t", value100(3), o.callback(3)))
	require.NoError(t, p.Flush(ctx))
	require.Equal(t, 4, o.len())
	require.NoError(t, o.errs[0])
	require.ErrorIs(t, o.errs[1], vfs.ErrInjected)
	require.NoError(t, o.errs[2])
	require.NoError(t, o.errs[3])
	type stamp struct {
		epoch int16
		seq   int32
	}
	var got []stamp
	hs := batchHeaders(t, m, 0)
	for _, h := range hs {
		require.Equal(t, hs[0].ProducerID, h.ProducerID)
		got = append(got, stamp{h.ProducerEpoch, h.BaseSequence})
	}
	require.Equal(t, []stamp{{0, 0}, {1, 0}, {1, 1}}, got, "epoch 1 starts at sequence 0")
}

// TestProducerRetryOfAWrittenBatch: an append that wrote its batch but
// answered with an I/O error (a lost answer) is tried again; the partition
// recognises the batch by its producer id and sequence, writes nothing,
// and the callbacks get the Positions the batch was written at. Without
// idempotence nothing is tried again (and the caller who produces the
// records again writes them twice).
func TestProducerRetryOfAWrittenBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := idemStore(t, strata.TopicConfig{})
		p := s.Producer(strata.ProducerOptions{Linger: -1})
		defer p.Close()
		var lost atomic.Int64
		strata.SetAfterAppend(p, func(err error) error {
			if err == nil && lost.Add(1) <= 2 {
				return &fs.PathError{Op: "write", Path: "t-0", Err: errors.New("answer lost")}
			}
			return err
		})
		var o outcomes
		for i := range 3 {
			require.NoError(t, p.Produce(ctx, "t", value100(i), o.callback(i)))
		}
		require.NoError(t, p.Flush(ctx))
		require.Equal(t, []error{nil, nil, nil}, o.errs)
		require.Equal(t, []strata.Position{{0, 0}, {0, 1}, {0, 2}}, o.pos)
		got, err := s.Read(ctx, "t", 0, 0, 10)
		require.NoError(t, err)
		require.Len(t, got, 3, "the batch is in the partition once")
		end, err := s.ListOffsets("t", 0, strata.Latest)
		require.NoError(t, err)
		require.Equal(t, int64(3), end)
	})
}

// failKth returns an injector that fails the k-th (from 1) operation among
// ops, and no other.
func failKth(k int64, ops ...vfs.Op) vfs.Injector {
	var seen atomic.Int64
	return func(op vfs.Op, _ string) error {
		if !slices.Contains(ops, op) {
			return nil
		}
		if seen.Add(1) == k {
			return vfs.ErrInjected
		}
		return nil
	}
}

// TestProducerCrashAtEveryOperation produces to 3 partitions under
// SyncAlways with an idempotent Producer while the k-th write, sync,
// rename or creation of the in-memory file system fails, for every k,
// then crashes the file system: after recovery every record whose callback
// reported success is there exactly once, no record is there twice (the
// retries of the failed writes wrote nothing twice), and a new Producer
// (with a new producer id) appends after them.
func TestProducerCrashAtEveryOperation(t *testing.T) {
	ops := []vfs.Op{vfs.OpWrite, vfs.OpWriteMap, vfs.OpAllocate, vfs.OpSync, vfs.OpSyncDir, vfs.OpRename, vfs.OpCreate, vfs.OpTruncate}
	opts := &strata.Options{Sync: strata.SyncAlways, RetentionCheckInterval: -1, CleanerInterval: -1, Logger: slog.New(slog.DiscardHandler)}
	const parts, n = 3, 30
	setup := func() *vfs.Mem {
		m := vfs.NewMem()
		s, err := strata.Open("data", onFS(m, opts))
		require.NoError(t, err)
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: parts, SegmentBytes: 2048}))
		require.NoError(t, s.Close())
		return m
	}
	// workload produces n records of distinct values, and returns those
	// acknowledged.
	workload := func(s *strata.Store) map[string]bool {
		p := s.Producer(strata.ProducerOptions{Linger: -1, BatchBytes: 250})
		var mu sync.Mutex
		acked := map[string]bool{}
		for i := range n {
			v := fmt.Sprint("v", i)
			err := p.Produce(ctx, "t", kv(fmt.Sprint("k", i%7), v), func(_ strata.Position, err error) {
				if err == nil {
					mu.Lock()
					acked[v] = true
					mu.Unlock()
				}
			})
			if err != nil {
				break
			}
			if i%2 == 1 {
				_ = p.Flush(ctx) // more batches
			}
		}
		_ = p.Close()
		return acked
	}
	count := func(m *vfs.Mem) (c int) {
		for _, op := range ops {
			c += m.Count(op)
		}
		return c
	}

	m := setup().Crash()
	s, err := strata.Open("data", onFS(m, opts))
	require.NoError(t, err)
	before := count(m)
	require.Len(t, workload(s), n)
	total := count(m) - before
	require.Positive(t, total)
	require.NoError(t, s.Close())
	t.Logf("%d operations", total)

	for k := 1; k <= total; k++ {
		synctest.Test(t, func(t *testing.T) {
			m := setup().Crash()
			s, err := strata.Open("data", onFS(m, opts))
			require.NoError(t, err)
			m.SetInjector(failKth(int64(k), ops...))
			acked := workload(s)
			after := m.Crash()
			_ = s.Close()
			s2, err := strata.Open("data", onFS(after, opts))
			require.NoError(t, err, "k=%d", k)
			defer s2.Close()
			seen := map[string]int{}
			for part := range parts {
				for r, err := range s2.Scan("t", part, 0) {
					require.NoError(t, err, "k=%d", k)
					seen[string(r.Value)]++
				}
			}
			for v, c := range seen {
				require.Equal(t, 1, c, "k=%d: %s is there %d times", k, v, c)
			}
			for v := range acked {
				require.Equal(t, 1, seen[v], "k=%d: acknowledged %s is missing", k, v)
			}
			p := s2.Producer(strata.ProducerOptions{})
			for part := range parts {
				_, err := s2.AppendTo(ctx, "t", part, kv("x", "plain"))
				require.NoError(t, err)
			}
			for i := range parts * 3 {
				require.NoError(t, p.Produce(ctx, "t", kv(fmt.Sprint("k", i), "after"), nil))
			}
			require.NoError(t, p.Close(), "k=%d", k)
		})
	}
}

// TestProducerLastEpoch: a producer at the last epoch (math.MaxInt16)
// whose batch fails for good takes a new producer id, at epoch 0.
func TestProducerLastEpoch(t *testing.T) {
	s, m := idemStore(t, strata.TopicConfig{})
	var armed atomic.Bool
	m.SetInjector(failLogWrites(1, &armed))
	p := s.Producer(strata.ProducerOptions{Linger: -1, DeliveryTimeout: -1})
	defer p.Close()
	_, err := p.ProduceSync(ctx, "t", value100(0))
	require.NoError(t, err)
	strata.SetProducerEpoch(p, math.MaxInt16)
	_, err = p.ProduceSync(ctx, "t", value100(1))
	require.NoError(t, err)
	armed.Store(true)
	_, err = p.ProduceSync(ctx, "t", value100(2))
	require.ErrorIs(t, err, vfs.ErrInjected)
	_, err = p.ProduceSync(ctx, "t", value100(3))
	require.NoError(t, err)
	hs := batchHeaders(t, m, 0)
	require.Len(t, hs, 3)
	require.Equal(t, int16(math.MaxInt16), hs[1].ProducerEpoch)
	require.Equal(t, hs[0].ProducerID, hs[1].ProducerID)
	require.NotEqual(t, hs[1].ProducerID, hs[2].ProducerID, "a new producer id")
	require.Equal(t, int16(0), hs[2].ProducerEpoch)
	require.Equal(t, int32(0), hs[2].BaseSequence)
}
