package partition

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// Under SyncAlways a decided marker returns without an fsync, and readers
// see it at once: the high watermark passes it, the last stable offset
// with it, and read_committed readers read the transaction (COMMIT) or
// skip it (ABORT). A crash before the next fsync loses the marker and
// nothing else: the transaction is open again, for its coordinator to end.
// The next append's fsync makes it durable.
func TestWriteDecidedMarker(t *testing.T) {
	for _, commit := range []bool{true, false} {
		t.Run(fmt.Sprint("commit=", commit), func(t *testing.T) {
			cfg := small(newClock())
			cfg.Sync = SyncAlways
			want := []string{"n0"}
			if commit {
				want = append(want, "p1-0", "p1-1", "p1-2")
			}
			run := func(then func(p *Partition)) *Partition {
				p, m := memPartition(t, cfg)
				w := newTxnWriter(t, p)
				plain(t, p, "n0")
				w.write(1, 0, 3)
				fsyncs := p.Stats().Fsyncs
				off, err := p.WriteDecidedMarker(1, 0, commit, 0)
				require.NoError(t, err)
				require.Equal(t, int64(4), off)
				require.Equal(t, fsyncs, p.Stats().Fsyncs, "no fsync")
				require.Equal(t, off, p.SyncedOffset(), "the marker is not durable")
				require.Equal(t, p.EndOffset(), p.HighWatermark(), "readers see the marker")
				require.Equal(t, p.EndOffset(), p.LastStableOffset())
				require.Equal(t, want, values(readIso(t, p, 0, ReadCommitted)))
				then(p)
				p2, err := Open(m.Crash(), "topic-0", cfg, false)
				require.NoError(t, err)
				t.Cleanup(func() { _ = p2.Close() })
				return p2
			}

			// A crash now loses the marker: the transaction is open again.
			p2 := run(func(*Partition) {})
			require.Equal(t, int64(4), p2.EndOffset())
			require.Equal(t, int64(1), p2.LastStableOffset(), "the transaction is open")
			require.Equal(t, int64(1), p2.Producers()[0].TxnFirstOffset)

			// The next append's fsync makes it durable.
			p3 := run(func(p *Partition) { plain(t, p, "n1") })
			require.Equal(t, int64(6), p3.EndOffset())
			require.Equal(t, p3.EndOffset(), p3.LastStableOffset())
			require.Equal(t, append(want, "n1"), values(readIso(t, p3, 0, ReadCommitted)))
		})
	}
}

// Under SyncEvery and SyncNever a decided marker is an ordinary one.
func TestWriteDecidedMarkerUnsynced(t *testing.T) {
	for _, sync := range []SyncPolicy{SyncNever, SyncEvery(0)} {
		cfg := small(newClock())
		if sync.Mode == SyncModeNever {
			cfg.Sync = sync
		}
		p, _ := memPartition(t, cfg)
		w := newTxnWriter(t, p)
		w.write(1, 0, 2)
		off, err := p.WriteDecidedMarker(1, 0, true, 0)
		require.NoError(t, err)
		require.Equal(t, off+1, p.HighWatermark())
		require.Equal(t, off+1, p.LastStableOffset())
		require.Equal(t, []string{"p1-0", "p1-1"}, values(readIso(t, p, 0, ReadCommitted)))
		_, err = p.WriteDecidedMarker(-1, 0, true, 0)
		require.ErrorIs(t, err, ErrInvalidProducer)
		require.NoError(t, p.Close())
	}
}

// The high watermark passes the decided markers that follow the synced
// offset without a gap, in whatever order they were entered, and no
// further.
func TestHighWatermarkPassesDecidedMarkers(t *testing.T) {
	cfg := small(newClock())
	cfg.Sync = SyncAlways
	p, _ := memPartition(t, cfg)
	defer p.Close()
	appendIDs(t, p, 0, 1)
	require.Equal(t, int64(2), p.visible.Load())
	p.addDecided(3) // after a record at 2 not durable yet
	require.Equal(t, int64(2), p.visible.Load())
	p.addDecided(5)
	p.addDecided(2)
	require.Equal(t, int64(4), p.visible.Load(), "2 and 3, not 5: 4 is not durable")
	p.syncMu.Lock()
	p.publishSynced(5)
	p.syncMu.Unlock()
	require.Equal(t, int64(6), p.visible.Load())
	require.Equal(t, []int64{5}, p.decided.offs, "those below the synced offset go")
}

// A roll makes the segment it seals durable before anything is written to
// the next one when it holds a transaction marker that may not be durable:
// recovery keeps the segments after one that lost its tail whole, and the
// marker must not be lost while the records after it stay.
func TestRollSyncsMarker(t *testing.T) {
	for _, decided := range []bool{false, true} {
		t.Run(fmt.Sprint("decided=", decided), func(t *testing.T) {
			cfg := small(newClock())
			if decided {
				cfg.Sync = SyncAlways
			}
			p, m := memPartition(t, cfg)
			defer p.Close()
			w := newTxnWriter(t, p)
			w.write(1, 0, 2)
			require.NoError(t, p.Sync())
			var (
				mu  sync.Mutex
				ops []string
			)
			m.SetInjector(func(op vfs.Op, path string) error {
				if op == vfs.OpSync || op == vfs.OpWrite || op == vfs.OpWriteMap {
					mu.Lock()
					ops = append(ops, op.String()+" "+path)
					mu.Unlock()
				}
				return nil
			})
			var err error
			if decided {
				_, err = p.WriteDecidedMarker(1, 0, true, 0)
			} else {
				_, err = p.WriteMarker(1, 0, true, 0)
			}
			require.NoError(t, err)
			for len(p.Segments()) < 2 {
				plain(t, p, strings.Repeat("filler", 50))
			}
			m.SetInjector(nil)
			next := p.Segments()[1].Base
			first := "topic-0/" + segment.FileName(0, segment.LogSuffix)
			second := "topic-0/" + segment.FileName(next, segment.LogSuffix)
			mu.Lock()
			defer mu.Unlock()
			synced := false
			for _, op := range ops {
				if op == "sync "+first {
					synced = true
				}
				if strings.HasSuffix(op, " "+second) && strings.HasPrefix(op, "write") {
					require.True(t, synced, "the first segment is synced before the second is written to: %q", ops)
					return
				}
			}
			t.Fatalf("no write to the second segment: %q", ops)
		})
	}
}

// SyncTo makes the records below an offset durable; a negative offset is
// ErrOutOfRange.
func TestSyncTo(t *testing.T) {
	cfg := small(newClock())
	p, m := memPartition(t, cfg)
	defer p.Close()
	appendIDs(t, p, 0, 1, 2)
	require.NoError(t, p.SyncTo(2))
	require.GreaterOrEqual(t, p.SyncedOffset(), int64(2))
	require.NoError(t, p.SyncTo(100), "past the end: everything")
	require.Equal(t, p.EndOffset(), p.SyncedOffset())
	require.ErrorIs(t, p.SyncTo(-1), ErrOutOfRange)
	p2, err := Open(m.Crash(), "topic-0", cfg, false)
	require.NoError(t, err)
	defer p2.Close()
	require.Equal(t, int64(3), p2.EndOffset())
}
