package partition

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// countWrites counts the creations of path suffix's files on m.
func countWrites(m *vfs.Mem, suffix string) *atomic.Int64 {
	n := new(atomic.Int64)
	m.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpCreate && strings.HasSuffix(path, suffix) {
			n.Add(1)
		}
		return nil
	})
	return n
}

// TestCheckpointWrittenOnlyWhenRecoveryMoves: a recovery point is written
// only when it makes recovery start at another segment than the file's
// does. A partition of one segment writes none (Open, Close, reopen and
// close again), and still recovers every record after a crash; once it
// rolls, the flush writes it, and a Close with the recovery point in the
// same segment, or a reopen and a Close with nothing appended, write
// nothing.
func TestCheckpointWrittenOnlyWhenRecoveryMoves(t *testing.T) {
	m := vfs.NewMem()
	writes := countWrites(m, recoveryPointFile+vfs.TempSuffix)
	p, err := Open(m, "topic-0", small(newClock()), false)
	require.NoError(t, err)
	appendIDs(t, p, seq(0, 5)...)
	require.NoError(t, p.Sync())
	require.NoError(t, p.Close())
	require.Zero(t, writes.Load())
	require.Equal(t, int64(-1), recoveryPoint(t, m, "topic-0"))

	m = m.Crash()
	writes = countWrites(m, recoveryPointFile+vfs.TempSuffix)
	p, err = Open(m, "topic-0", small(newClock()), false)
	require.NoError(t, err)
	requireIDs(t, readRange(t, p, 0), 0, seq(0, 5))
	appendIDs(t, p, seq(5, 8)...)
	require.NoError(t, p.Close())
	require.Zero(t, writes.Load())

	p, err = Open(m, "topic-0", small(newClock()), true)
	require.NoError(t, err)
	id := 8
	for len(p.Segments()) < 3 {
		appendIDs(t, p, id)
		id++
	}
	require.NoError(t, p.Sync())
	w := writes.Load()
	require.Positive(t, w, "the flushes after the rolls")
	segs := p.Segments()
	require.Equal(t, segs[len(segs)-1].Base, recoveryPoint(t, m, "topic-0"))
	require.NoError(t, p.Close())
	require.Equal(t, w, writes.Load(), "Close's, the last segment's end, starts recovery there too")

	p, err = Open(m, "topic-0", small(newClock()), true)
	require.NoError(t, err)
	require.NoError(t, p.Close())
	require.Equal(t, w, writes.Load(), "nothing appended, nothing written")

	p, err = Open(m.Crash(), "topic-0", small(newClock()), false)
	require.NoError(t, err)
	requireIDs(t, readRange(t, p, 0), 0, seq(0, id))
	require.NoError(t, p.Close())
}
