package partition

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// TestCrashDuringTruncate crashes a Truncate to an offset in an early
// segment at every file-system operation, on a compacted partition (whose
// segments may be apart, so Open keeps a gap between them) and on a plain
// one: what reopens is always a prefix of what was written, every offset
// below the end there with its own record, ending at the truncation offset
// or later; never the later segments' records behind a hole.
func TestCrashDuringTruncate(t *testing.T) {
	ops := []vfs.Op{vfs.OpWrite, vfs.OpWriteMap, vfs.OpAllocate, vfs.OpSync, vfs.OpSyncDir, vfs.OpRename, vfs.OpRemove, vfs.OpCreate, vfs.OpTruncate, vfs.OpSyncMap}
	for _, compacted := range []bool{true, false} {
		build := func() (*Partition, *vfs.Mem, *fakeClock, map[int64]kv) {
			clock := newClock()
			cfg := small(clock)
			cfg.Compacted = compacted
			p, m := memPartition(t, cfg)
			written := writeKVs(t, p, rand.New(rand.NewPCG(5, 5)), 300)
			require.NoError(t, p.Sync())
			require.Greater(t, len(p.state.Load().segs), 3)
			return p, m, clock, written
		}
		const to = 40 // inside an early segment
		p, m, _, _ := build()
		before := opsIn(m, ops)
		require.NoError(t, p.Truncate(to))
		total := opsIn(m, ops) - before
		require.Positive(t, total)

		for k := 0; k <= total; k++ {
			p, m, clock, written := build()
			m.SetInjector(vfs.FailAfter(k, ops...))
			truncErr := p.Truncate(to)
			after := m.Crash()
			cfg := small(clock)
			cfg.Compacted = compacted
			p2, err := Open(after, "topic-0", cfg, false)
			require.NoError(t, err, "compacted=%v k=%d", compacted, k)
			end := p2.EndOffset()
			require.GreaterOrEqual(t, end, int64(to), "compacted=%v k=%d", compacted, k)
			if truncErr == nil {
				require.Equal(t, int64(to), end, "compacted=%v k=%d: a Truncate that returned is durable", compacted, k)
			}
			recs := readRange(t, p2, 0)
			for i, r := range recs {
				require.Equal(t, int64(i), r.Offset, "compacted=%v k=%d: every offset below the end, no hole", compacted, k)
				require.Equal(t, written[r.Offset].key, string(r.Key))
			}
			require.Equal(t, int(end), len(recs), "compacted=%v k=%d", compacted, k)
			require.NoError(t, p2.Close())
		}
	}
}
