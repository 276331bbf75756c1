package partition

import (
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// failing returns an Injector that fails every operation op on a path
// ending in suffix with err while on is set, and a switch for it.
func failing(op vfs.Op, suffix string, err error) (vfs.Injector, *atomic.Bool) {
	on := new(atomic.Bool)
	on.Store(true)
	return func(o vfs.Op, path string) error {
		if on.Load() && o == op && strings.HasSuffix(path, suffix) {
			return err
		}
		return nil
	}, on
}

// recoveryPoint reads the partition's recovery-point checkpoint.
func recoveryPoint(t *testing.T, m *vfs.Mem, dir string) int64 {
	t.Helper()
	rp, err := readCheckpoint(m, dir, recoveryPointFile, -1)
	require.NoError(t, err)
	return rp
}

// TestCheckpointOnFullDisk fails every write of recovery-point.tmp with
// ENOSPC while rolls happen: appends and Sync go on, the checkpoint keeps
// its earlier (safe) value, and once there is space again the next flush
// writes it, Close too, and everything appended is there after a crash.
func TestCheckpointOnFullDisk(t *testing.T) {
	p, m := memPartition(t, small(newClock()))
	inject, on := failing(vfs.OpWrite, recoveryPointFile+".tmp", syscall.ENOSPC)
	m.SetInjector(inject)
	appendIDs(t, p, seq(0, 100)...)
	require.GreaterOrEqual(t, len(p.Segments()), 3, "the appends rolled")
	require.NoError(t, p.Sync(), "the records are synced; only the checkpoint is not")
	require.Equal(t, int64(100), p.SyncedOffset())
	require.Equal(t, int64(-1), recoveryPoint(t, m, "topic-0"), "none yet: Open had none to write, recovery starting at the first segment anyway")
	appendIDs(t, p, seq(100, 150)...)

	on.Store(false)
	require.NoError(t, p.Sync())
	segs := p.Segments()
	require.Equal(t, segs[len(segs)-1].Base, recoveryPoint(t, m, "topic-0"), "the next flush writes it")
	appendIDs(t, p, seq(150, 160)...)
	segs = p.Segments()
	require.NoError(t, p.Close())
	require.GreaterOrEqual(t, recoveryPoint(t, m, "topic-0"), segs[len(segs)-1].Base, "and Close, if recovery is to start at a later segment")

	p2, err := Open(m.Crash(), "topic-0", small(newClock()), false)
	require.NoError(t, err)
	requireIDs(t, readRange(t, p2, 0), 0, seq(0, 160))
	require.NoError(t, p2.Close())
}

// TestCloseOnFullDisk fails the checkpoint Close writes: Close still
// succeeds (every record is synced and every segment sealed), and the
// partition reopens clean with every record.
func TestCloseOnFullDisk(t *testing.T) {
	p, m := memPartition(t, small(newClock()))
	appendIDs(t, p, seq(0, 50)...)
	inject, _ := failing(vfs.OpWrite, recoveryPointFile+".tmp", syscall.ENOSPC)
	m.SetInjector(inject)
	require.NoError(t, p.Close())
	m.SetInjector(nil)
	require.Less(t, recoveryPoint(t, m, "topic-0"), int64(50), "an earlier recovery point")

	p2, err := Open(m.Crash(), "topic-0", small(newClock()), true)
	require.NoError(t, err)
	requireIDs(t, readRange(t, p2, 0), 0, seq(0, 50))
	require.NoError(t, p2.Close())
}

// TestRollOnFullDisk fails a roll for want of space at each of its steps:
// the append fails with ENOSPC and assigns no offset, the partition stays
// open, and once there is space the next append rolls and lands, with
// every record there after a reopen.
func TestRollOnFullDisk(t *testing.T) {
	tests := []struct {
		name string
		full func(m *vfs.Mem) (stop func())
		// later: the roll itself needs no room, and the full disk fails
		// the first append that needs some (the new segment's index
		// files, or its batches).
		later bool
	}{
		{"creating the next segment's files", func(m *vfs.Mem) func() {
			inject, on := failing(vfs.OpCreate, segment.LogSuffix, syscall.ENOSPC)
			m.SetInjector(inject)
			return func() { on.Store(false) }
		}, false},
		{"a full disk", func(m *vfs.Mem) func() {
			// Sealing frees the room reserved past the old segment's
			// batches and entries, less than the new one's indexes take
			// once its log passes the index interval.
			m.SetDiskLimit(m.DiskUsage())
			return func() { m.SetDiskLimit(-1) }
		}, true},
		{"sealing, after a trimmed index", func(m *vfs.Mem) func() {
			inject, on := failing(vfs.OpTruncate, segment.TimeIndexSuffix, syscall.ENOSPC)
			m.SetInjector(inject)
			return func() { on.Store(false) }
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, m := memPartition(t, small(newClock()))
			id := 0
			for len(p.Segments()) < 3 || p.Segments()[len(p.Segments())-1].Bytes < 3<<10 {
				appendIDs(t, p, id)
				id++
			}
			stop := tt.full(m)
			segs := len(p.Segments())
			before := segs
			var err error
			for err == nil && (len(p.Segments()) == segs || tt.later) && id < 10_000 {
				if _, err = p.Append([]log.Record{rec(id)}); err == nil {
					id++
				}
			}
			require.ErrorIs(t, err, syscall.ENOSPC)
			require.NotErrorIs(t, err, ErrClosed, "a full disk does not close the partition")
			require.Equal(t, int64(id), p.EndOffset(), "the failed append assigned no offset")
			if tt.later {
				segs = len(p.Segments())
			}
			require.Len(t, p.Segments(), segs, "no segment was added")
			_, err = p.Append([]log.Record{rec(id)})
			require.ErrorIs(t, err, syscall.ENOSPC, "the next append tries the roll again")

			stop()
			appendIDs(t, p, seq(id, id+20)...)
			require.Greater(t, len(p.Segments()), before, "the roll happened")
			requireIDs(t, readRange(t, p, 0), 0, seq(0, id+20))
			require.NoError(t, p.Close())

			p2, err := Open(m, "topic-0", small(newClock()), true)
			require.NoError(t, err)
			requireIDs(t, readRange(t, p2, 0), 0, seq(0, id+20))
			require.NoError(t, p2.Close())
		})
	}
}

// TestRollFailedFsyncCloses: a roll, or the creation of a segment's index
// files, whose directory fsync fails closes the partition to appends, even
// with ENOSPC, since the new files may not be durable.
func TestRollFailedFsyncCloses(t *testing.T) {
	p, m := memPartition(t, small(newClock()))
	inject, _ := failing(vfs.OpSyncDir, "topic-0", syscall.ENOSPC)
	m.SetInjector(inject)
	var err error
	for id := 0; err == nil; id++ {
		_, err = p.Append([]log.Record{rec(id)})
	}
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, err, segment.ErrSync)
}

// TestTruncateAfterFailedCheckpoint leaves a recovery point due (its write
// failed), then truncates below it: Truncate's own checkpoint supersedes
// it, and no later flush writes the stale one, which would lie past the
// rewritten segment and let recovery trust segments rolled after it.
func TestTruncateAfterFailedCheckpoint(t *testing.T) {
	p, m := memPartition(t, small(newClock()))
	inject, _ := failing(vfs.OpWrite, recoveryPointFile+".tmp", syscall.ENOSPC)
	m.SetInjector(inject)
	appendIDs(t, p, seq(0, 100)...)
	require.NoError(t, p.Sync())
	m.SetInjector(vfs.FailOnce(vfs.OpWrite, recoveryPointFile+".tmp")) // the retry in Truncate's flush
	require.NoError(t, p.Truncate(10))
	m.SetInjector(nil)
	appendIDs(t, p, seq(10, 15)...)
	require.NoError(t, p.Sync())
	segs := p.Segments()
	require.LessOrEqual(t, recoveryPoint(t, m, "topic-0"), segs[len(segs)-1].Base)
	requireIDs(t, readRange(t, p, 0), 0, seq(0, 15))
}
