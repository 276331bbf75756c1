package partition

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// crashOps are the operations whose failure the crash test injects: from
// the k-th on, every one fails, as if the machine had died there.
var crashOps = []vfs.Op{vfs.OpWrite, vfs.OpWriteMap, vfs.OpAllocate, vfs.OpSync, vfs.OpSyncMap, vfs.OpSyncDir, vfs.OpTruncate, vfs.OpCreate, vfs.OpRename, vfs.OpRemove}

// crashWorkload appends single records and small batches under SyncAlways,
// rolling every few KiB, until an append fails. It returns how many records
// were acknowledged (their Append returned nil).
func crashWorkload(p *Partition) int64 {
	var acked int64
	for i := 0; i < 240; {
		n := 1 + i%3
		recs := make([]log.Record, n)
		for j := range recs {
			recs[j] = rec(i + j)
		}
		off, err := p.Append(recs)
		if err != nil {
			return acked
		}
		if off != int64(i) {
			panic("offsets not dense")
		}
		i += n
		acked = int64(i)
	}
	return acked
}

// TestCrashAtEveryOperation crashes the in-memory file system at the k-th
// write, sync, truncate, create, rename or removal of a workload of appends
// and rolls, for every k, then reopens the partition: every record whose
// Append returned under SyncAlways is there with its offset and bytes,
// offsets are dense, and no read returns anything else. It runs with appends
// copied into the mapping (the default) and with write calls, and with
// segments that roll every 4 KiB and one segment of several pages (where a
// crash that writes back random pages tears a segment in its middle). The
// crash keeps what was synced, or a torn prefix of what was not, or random
// pages of it.
func TestCrashAtEveryOperation(t *testing.T) {
	for _, writeCalls := range []bool{false, true} {
		for _, segmentBytes := range []int64{4 << 10, 64 << 10} {
			t.Run(fmt.Sprintf("writeCalls=%v/segment=%d", writeCalls, segmentBytes), func(t *testing.T) {
				t.Parallel()
				cfg := small(newClock())
				cfg.Sync = SyncAlways
				cfg.WriteCalls = writeCalls
				cfg.SegmentBytes = segmentBytes
				crashAtEveryOperation(t, cfg)
			})
		}
	}
}

func crashAtEveryOperation(t *testing.T, cfg Config) {
	m := vfs.NewMem()
	m.SetInjector(vfs.FailAfter(1<<30, crashOps...))
	p, err := Open(m, "t-0", cfg, false)
	require.NoError(t, err)
	require.Equal(t, int64(240), crashWorkload(p))
	if cfg.SegmentBytes < 8<<10 {
		require.Greater(t, len(p.Segments()), 3, "the workload rolls")
	} else {
		require.Len(t, p.Segments(), 1)
		require.Greater(t, p.Stats().Bytes, int64(8<<10), "the segment spans pages")
	}
	total := opsIn(m, crashOps)

	for k := 0; k <= total; k++ {
		for _, torn := range []string{"none", "prefix", "pages"} {
			m := vfs.NewMem()
			m.SetInjector(vfs.FailAfter(k, crashOps...))
			var acked int64
			if p, err := Open(m, "t-0", cfg, false); err == nil {
				acked = crashWorkload(p)
			}
			var after *vfs.Mem
			switch torn {
			case "prefix":
				after = m.CrashKeepingPrefix(newRand(k))
			case "pages":
				after = m.CrashKeepingPages(newRand(k))
			default:
				after = m.Crash()
			}
			p2, err := Open(after, "t-0", cfg, false)
			require.NoError(t, err, "k=%d torn=%s", k, torn)
			end := p2.EndOffset()
			require.GreaterOrEqual(t, end, acked, "k=%d torn=%s: acknowledged records lost", k, torn)
			requireIDs(t, readRange(t, p2, 0), 0, seq(0, int(end)))
			// The recovered partition takes appends at the next offset.
			off, err := p2.Append([]log.Record{rec(int(end))})
			require.NoError(t, err)
			require.Equal(t, end, off)
			require.NoError(t, p2.Close())
		}
	}
}
