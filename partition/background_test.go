package partition

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// TestBackgroundStartsWithTheFirstWrite: a partition starts its background
// goroutine at the first roll, or under SyncEvery at the first append, and
// not at Open: one opened and closed without a write starts none, and its
// Close does not wait for one.
func TestBackgroundStartsWithTheFirstWrite(t *testing.T) {
	rec := []log.Record{{Value: make([]byte, 100)}}
	for _, tc := range []struct {
		name         string
		sync         SyncPolicy
		afterAppend  bool // started by an append that does not roll
		appendsToRun int  // appends after which it runs (each past SegmentBytes rolls)
	}{
		{"never", SyncNever, false, 2},
		{"always", SyncAlways, false, 2},
		{"every", SyncEvery(0), true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := func(p *Partition) bool {
				p.mu.Lock()
				defer p.mu.Unlock()
				return p.mu.bgStarted
			}
			fsys := vfs.NewMem()
			cfg := Config{Sync: tc.sync, SegmentBytes: 200}
			p, err := Open(fsys, "p", cfg, false)
			require.NoError(t, err)
			require.False(t, started(p), "after Open")
			require.NoError(t, p.Close())

			p, err = Open(fsys, "p", cfg, true)
			require.NoError(t, err)
			_, err = p.Append(rec)
			require.NoError(t, err)
			require.Equal(t, tc.afterAppend, started(p), "after an append that does not roll")
			for range tc.appendsToRun - 1 {
				_, err = p.Append(rec)
				require.NoError(t, err)
			}
			require.True(t, started(p), "after a roll")
			require.NoError(t, p.Close())
			require.Equal(t, int64(len(rec)*tc.appendsToRun), p.synced.Load())
		})
	}
}
