package partition

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// TestConcurrentAppendersAndReaders runs appenders, readers and tailing
// iterators at once on a partition that rolls every few KiB. Every reader
// sees every offset exactly once, in order, with the bytes that were written.
func TestConcurrentAppendersAndReaders(t *testing.T) {
	const (
		appenders = 4
		appends   = 150
		readers   = 3
		tailers   = 2
	)
	for _, tc := range []struct {
		name string
		fs   func(t *testing.T) (vfs.FS, string)
		sync SyncPolicy
	}{
		{"fs=mem/sync=never", func(t *testing.T) (vfs.FS, string) { return vfs.NewMem(), "t-0" }, SyncNever},
		{"fs=mem/sync=always", func(t *testing.T) (vfs.FS, string) { return vfs.NewMem(), "t-0" }, SyncAlways},
		{"fs=os/sync=always", func(t *testing.T) (vfs.FS, string) { return vfs.OS, t.TempDir() }, SyncAlways},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir := tc.fs(t)
			cfg := small(newClock())
			cfg.Now = time.Now
			cfg.Sync = tc.sync
			p, err := Open(fsys, dir, cfg, false)
			require.NoError(t, err)

			// Each appender records which ids landed at which offsets.
			written := make([]map[int64]int, appenders)
			var wg sync.WaitGroup
			for a := range appenders {
				written[a] = map[int64]int{}
				wg.Go(func() {
					for i := range appends {
						n := 1 + i%3
						recs := make([]log.Record, n)
						id := (a*appends+i)*3 + 0
						for j := range recs {
							recs[j] = rec(id + j)
						}
						off, err := p.Append(recs)
						if err != nil {
							t.Error(err)
							return
						}
						for j := range recs {
							written[a][off+int64(j)] = id + j
						}
					}
				})
			}
			total := int64(0)
			for i := range appends {
				total += int64(1+i%3) * appenders
			}

			type seen struct {
				offsets []int64
				keys    [][]byte
				values  [][]byte
			}
			results := make([]seen, readers+tailers)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var rg sync.WaitGroup
			for r := range readers {
				rg.Go(func() {
					rd := p.NewReader(0)
					defer rd.Close()
					var x log.Record
					for rd.Offset() < total {
						if err := rd.NextWait(ctx, &x); err != nil {
							t.Error(err)
							return
						}
						results[r].offsets = append(results[r].offsets, x.Offset)
						results[r].keys = append(results[r].keys, bytes.Clone(x.Key))
						results[r].values = append(results[r].values, bytes.Clone(x.Value))
					}
				})
			}
			for r := readers; r < readers+tailers; r++ {
				rg.Go(func() {
					for x, err := range p.Records(ctx, 0) {
						if err != nil {
							t.Error(err)
							return
						}
						results[r].offsets = append(results[r].offsets, x.Offset)
						results[r].keys = append(results[r].keys, bytes.Clone(x.Key))
						results[r].values = append(results[r].values, bytes.Clone(x.Value))
						if x.Offset == total-1 {
							return
						}
					}
				})
			}
			wg.Wait()
			rg.Wait()
			require.Equal(t, total, p.EndOffset())
			require.Greater(t, len(p.Segments()), 10, "the segments rolled many times")

			ids := map[int64]int{}
			for _, w := range written {
				for off, id := range w {
					_, dup := ids[off]
					require.False(t, dup, "offset %d assigned twice", off)
					ids[off] = id
				}
			}
			require.Len(t, ids, int(total))
			for r, s := range results {
				require.Len(t, s.offsets, int(total), "reader %d", r)
				for i, off := range s.offsets {
					require.Equal(t, int64(i), off, "reader %d sees every offset once, in order", r)
					want := rec(ids[off])
					require.Equal(t, want.Key, s.keys[i], "reader %d offset %d", r, off)
					require.Equal(t, want.Value, s.values[i], "reader %d offset %d", r, off)
				}
			}
			if tc.sync.Mode == SyncModeAlways {
				require.Equal(t, total, p.SyncedOffset())
			}
			require.NoError(t, p.Close())
		})
	}
}

// TestGroupCommit: with SyncAlways, concurrent appenders share fsyncs. It runs
// in a synctest bubble, where the slow fsyncs take fake time.
func TestGroupCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small(newClock())
		cfg.SegmentBytes = 1 << 20
		cfg.MaxBatchBytes = 1 << 10
		cfg.Sync = SyncAlways
		// Slow fsyncs, as a disk has, give appenders time to queue behind one.
		p, err := Open(slowSyncFS{vfs.NewMem()}, "t-0", cfg, false)
		require.NoError(t, err)
		const appenders, each = 16, 50
		var wg sync.WaitGroup
		for a := range appenders {
			wg.Go(func() {
				for i := range each {
					if _, err := p.Append([]log.Record{rec(a*each + i)}); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		st := p.Stats()
		require.Equal(t, int64(appenders*each), st.AppendedRecords)
		require.Less(t, st.Fsyncs, int64(appenders*each)/2, "appenders share fsyncs")
		require.Equal(t, p.EndOffset(), p.SyncedOffset())
		require.NoError(t, p.Close())
	})
}

// slowSyncFS is a file system whose fsyncs take a while, outside any lock:
// 500µs on the clock of the synctest bubble that calls them.
type slowSyncFS struct{ vfs.FS }

func (s slowSyncFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := s.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return slowSyncFile{f}, nil
}

type slowSyncFile struct{ vfs.File }

func (f slowSyncFile) Sync() error {
	time.Sleep(500 * time.Microsecond)
	return f.File.Sync()
}

// TestTruncateUnderReaders truncates while readers read: Truncate rewrites
// the segment into new files, so readers never fault on a shrunk file, and
// everything they read below the final end is what was written.
func TestTruncateUnderReaders(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	appendIDs(t, p, seq(0, 600)...)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			rd := p.NewReader(0)
			defer rd.Close()
			var x log.Record
			for ctx.Err() == nil {
				ok, err := rd.Next(&x)
				if err != nil {
					if !errors.Is(err, ErrOutOfRange) {
						t.Error(err)
						return
					}
					rd.SetOffset(0)
					continue
				}
				if !ok {
					rd.SetOffset(0)
					continue
				}
				if want := rec(int(x.Offset)); !bytes.Equal(want.Value, x.Value) {
					t.Errorf("offset %d: wrong value", x.Offset)
					return
				}
			}
		})
	}
	for end := 590; end > 300; end -= 29 {
		require.NoError(t, p.Truncate(int64(end)))
		require.Equal(t, int64(end), p.EndOffset())
	}
	cancel()
	wg.Wait()
	requireIDs(t, readRange(t, p, 0), 0, seq(0, int(p.EndOffset())))
	require.NoError(t, p.Close())
}
