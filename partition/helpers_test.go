package partition

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// small is a configuration whose segments roll every few KiB, on a clock
// that tests control. It fsyncs when a roll, Sync or Close does, never on
// a timer (the interval is an hour), so crash tests see what those make
// durable.
func small(clock *fakeClock) Config {
	return Config{
		SegmentBytes:       4 << 10,
		MaxBatchBytes:      2 << 10,
		IndexIntervalBytes: 256,
		MaxIndexBytes:      4 << 10,
		Sync:               SyncEvery(time.Hour),
		Now:                clock.Now,
		Logger:             slog.New(slog.DiscardHandler),
	}
}

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func newClock() *fakeClock { return &fakeClock{time.UnixMilli(1_700_000_000_000)} }

func (c *fakeClock) Now() time.Time { return c.t }

func (c *fakeClock) Add(d time.Duration) { c.t = c.t.Add(d) }

// rec is the record the tests write for id: its key and value are derived
// from id, so any record read back can be checked.
func rec(id int) log.Record {
	return log.Record{
		Key:   fmt.Appendf(nil, "key-%d", id),
		Value: bytes.Repeat(fmt.Appendf(nil, "value-%d;", id), 1+id%7),
	}
}

// memPartition opens a partition on a fresh in-memory file system.
func memPartition(t testing.TB, cfg Config) (*Partition, *vfs.Mem) {
	t.Helper()
	m := vfs.NewMem()
	p, err := Open(m, "topic-0", cfg, false)
	require.NoError(t, err)
	return p, m
}

// appendIDs appends one record per id, each in its own batch, and returns
// the offsets.
func appendIDs(t testing.TB, p *Partition, ids ...int) []int64 {
	t.Helper()
	var offs []int64
	for _, id := range ids {
		off, err := p.Append([]log.Record{rec(id)})
		require.NoError(t, err)
		offs = append(offs, off)
	}
	return offs
}

// readRange reads every record from offset from to the end.
func readRange(t testing.TB, p *Partition, from int64) []log.Record {
	t.Helper()
	return readIso(t, p, from, ReadUncommitted)
}

// requireIDs checks that recs are the records of ids at dense offsets from
// first.
func requireIDs(t testing.TB, recs []log.Record, first int64, ids []int) {
	t.Helper()
	require.Equal(t, len(ids), len(recs), "record count")
	for i, id := range ids {
		want := rec(id)
		require.Equal(t, first+int64(i), recs[i].Offset)
		require.Equal(t, want.Key, recs[i].Key, "offset %d", recs[i].Offset)
		require.Equal(t, want.Value, recs[i].Value, "offset %d", recs[i].Offset)
	}
}

// requireIDsAtOwnOffsets checks that recs are the records of ids, each at
// the offset equal to its id (a partition written with appendIDs from 0,
// where gaps may have removed some).
func requireIDsAtOwnOffsets(t testing.TB, recs []log.Record, ids []int) {
	t.Helper()
	require.Equal(t, len(ids), len(recs), "record count")
	for i, id := range ids {
		want := rec(id)
		require.Equal(t, int64(id), recs[i].Offset)
		require.Equal(t, want.Key, recs[i].Key, "offset %d", recs[i].Offset)
		require.Equal(t, want.Value, recs[i].Value, "offset %d", recs[i].Offset)
	}
}

func seq(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func newRand(seed int) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 42)) }

// testLogger logs into w, so tests can check what recovery reported.
func testLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil))
}

// opsIn returns how many of ops m has done: the crash tests count the
// operations of one run to crash at each in the next.
func opsIn(m *vfs.Mem, ops []vfs.Op) int {
	n := 0
	for _, op := range ops {
		n += m.Count(op)
	}
	return n
}

// appendInFsync starts an append of rec(id) to p, on m, and returns once
// the append wrote its batch and is held in the fsync of its .log. finish
// lets the fsync go on (once; later calls do nothing), clears m's
// injector and returns the append's error.
func appendInFsync(p *Partition, m *vfs.Mem, id int) (finish func() error) {
	block := make(chan struct{})
	entered := make(chan struct{}, 1)
	m.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpSync && strings.HasSuffix(path, ".log") {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-block
		}
		return nil
	})
	done := make(chan error, 1)
	go func() {
		_, err := p.Append([]log.Record{rec(id)})
		done <- err
	}()
	<-entered
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() {
			close(block)
			m.SetInjector(nil)
			err = <-done
		})
		return err
	}
}

// conditionalSyncPolicies are the sync policies the races of conditional
// appends run under: offsets assigned and visible at once, and assigned
// before an fsync that makes them visible.
var conditionalSyncPolicies = []struct {
	name string
	sync SyncPolicy
}{
	{"sync=never", SyncNever},
	{"sync=always", SyncAlways},
}

// raceWin is an appender of a race that succeeded: its number, and the
// offset it got.
type raceWin struct {
	a   int
	off int64
}

// race runs f(a) for a = 0..n-1, all released at once, and returns
// those that succeeded, in the order they returned, and the errors of the
// others.
func race(n int, f func(a int) (int64, error)) (wins []raceWin, errs []error) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	for a := range n {
		wg.Go(func() {
			<-start
			off, err := f(a)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			wins = append(wins, raceWin{a, off})
		})
	}
	close(start)
	wg.Wait()
	return wins, errs
}
