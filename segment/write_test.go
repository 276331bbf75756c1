package segment

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/index"
	"github.com/stratalog/strata/vfs"
)

// logFileSize returns the size of the segment's .log file.
func logFileSize(t *testing.T, fx fixture, base int64) int64 {
	t.Helper()
	info, err := fx.fsys.Stat(filepath.Join(fx.dir, FileName(base, LogSuffix)))
	require.NoError(t, err)
	return info.Size
}

// TestMappedWritesGrowAndTrim checks the life of a file that appends copy
// into: the first append writes its batch alone; after it the file is
// grown ahead of the batches, with zeros written in steps of 64 KiB that
// grow with the file (on Linux, zerosAhead) or with blocks reserved in
// steps of 64 KiB, then doubling (elsewhere); reads see every batch, Seal
// trims the zeros, and after a crash recovery counts them as the zero
// tail, not as damage.
func TestMappedWritesGrowAndTrim(t *testing.T) {
	eachFS(t, func(t *testing.T, fx fixture) {
		cfg := Config{MaxBytes: 8 << 20}
		s, err := Create(fx.fsys, fx.dir, 0, cfg)
		require.NoError(t, err)
		written := appendRandom(t, s, rand.New(rand.NewPCG(1, 2)), 1, 5, 100)
		require.Equal(t, s.Size(), logFileSize(t, fx, 0), "the first append writes its batch only")
		written = append(written, appendRandom(t, s, rand.New(rand.NewPCG(1, 3)), 1, 5, 100)...)
		if s.zerosAhead {
			require.Equal(t, s.Size()+minGrowth, logFileSize(t, fx, 0), "zeros 64 KiB past the second batch")
		} else {
			require.Equal(t, int64(minGrowth), logFileSize(t, fx, 0), "the first step reserves 64 KiB")
		}
		for s.Size() < 300<<10 {
			written = append(written, appendRandom(t, s, rand.New(rand.NewPCG(uint64(s.Size()), 2)), 10, 5, 500)...)
		}
		fileSize := logFileSize(t, fx, 0)
		if s.zerosAhead {
			require.Equal(t, s.zeroed, fileSize, "the zeros reach the end of the file")
			require.Greater(t, fileSize, s.Size()+int64(minGrowth), "the steps grow with the file")
			require.LessOrEqual(t, fileSize, s.Size()+zeroStep)
		} else {
			require.Equal(t, int64(512<<10), fileSize, "64 KiB, then doubling: 128, 256, 512")
		}
		require.Equal(t, fileSize, s.allocated)
		requireRecords(t, written, 0, readAll(t, s, 0, 1<<30))

		require.NoError(t, s.Seal())
		require.Equal(t, s.Size(), logFileSize(t, fx, 0), "Seal trims the zeros")
		require.NoError(t, s.Close())
	})

	fx, m := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: 8 << 20})
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(3, 4)), 20, 5, 100)
	require.NoError(t, s.Sync())
	fileSize := logFileSize(t, fx, 0)
	require.Greater(t, fileSize, s.Size())
	after := m.Crash()
	r, rec, err := OpenRecover(after, fx.dir, 0, Config{MaxBytes: 8 << 20})
	require.NoError(t, err)
	require.Zero(t, rec.Truncated)
	require.Equal(t, fileSize-r.Size(), rec.ZeroTail)
	requireRecords(t, written, 0, readAll(t, r, 0, 1<<30))
	require.NoError(t, r.Close())
}

// TestLargeAppendsWrite checks that an append of a page or more uses a
// write call, between appends that copy into the mapping, and that reads
// see them all; on Linux each append after the first that reaches past the
// zeros writes zeros ahead first, with one more write call.
func TestLargeAppendsWrite(t *testing.T) {
	fx, m := memFixture(t)
	logWrites := 0 // write calls to the .log; the injector runs under the Mem's lock
	m.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpWrite && strings.HasSuffix(path, LogSuffix) {
			logWrites++
		}
		return nil
	})
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: 1 << 20})
	require.NoError(t, err)
	var written []writtenBatch
	for i := range 20 {
		valueSize := 50
		if i%3 == 1 {
			valueSize = 1000 // five records: over 4 KiB
		}
		writes := logWrites
		recs := makeRecords(s.NextOffset(), 5, valueSize, 1)
		b := encode(t, recs)
		want := writes
		if s.zerosAhead && i > 0 && s.Size()+int64(len(b)) > s.zeroed {
			want++ // the zeros
		}
		if len(b) > mappedWriteMax || i == 0 { // the first append is written too
			want++
		}
		require.NoError(t, s.Append(b))
		written = append(written, writtenBatch{b, recs})
		require.Equal(t, want, logWrites, "append %d of %d bytes", i, len(b))
	}
	requireRecords(t, written, 0, readAll(t, s, 0, 1<<30))
	require.NoError(t, s.Close())
}

// TestMappedWritesFallBack checks that appends use write calls where the
// file system cannot reserve blocks and the zeros ahead of them cannot be
// written (on Linux, the first write call of each append), and still land.
func TestMappedWritesFallBack(t *testing.T) {
	fx, m := memFixture(t)
	logAllocs, batchWrites := 0, 0 // the injector runs under the Mem's lock
	failZeros := false
	m.SetInjector(func(op vfs.Op, path string) error {
		switch {
		case !strings.HasSuffix(path, LogSuffix):
		case op == vfs.OpAllocate:
			logAllocs++
			return errors.ErrUnsupported
		case op == vfs.OpWrite && failZeros:
			failZeros = false
			return vfs.ErrInjected
		case op == vfs.OpWrite:
			batchWrites++
		}
		return nil
	})
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: 1 << 20})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(5, 6))
	var written []writtenBatch
	for i := range 10 {
		failZeros = s.zerosAhead && i > 0
		written = append(written, appendRandom(t, s, r, 1, 5, 100)...)
		require.False(t, failZeros, "append %d wrote zeros first", i)
	}
	require.True(t, s.noReserve)
	require.Equal(t, 10, batchWrites, "one write call per append")
	require.Equal(t, 1, logAllocs, "an unsupported reservation is not retried")
	requireRecords(t, written, 0, readAll(t, s, 0, 1<<30))
	require.NoError(t, s.Close())
	require.Equal(t, int64(len(concat(written))), logFileSize(t, fx, 0), "Close trims the torn zeros")
}

// TestMappedWriteFaultIsAnError shrinks a segment's file behind its back,
// on the OS: the next append's copy into the mapping faults (SIGBUS), and
// Append must return an error rather than crash the process.
func TestMappedWriteFaultIsAnError(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(vfs.OS, dir, 0, Config{MaxBytes: 1 << 20})
	require.NoError(t, err)
	appendRandom(t, s, rand.New(rand.NewPCG(7, 8)), 3, 5, 100)
	size, next := s.Size(), s.NextOffset()
	require.NoError(t, os.Truncate(filepath.Join(dir, FileName(0, LogSuffix)), 0))

	err = s.Append(encode(t, makeRecords(next, 5, 100, 1)))
	require.ErrorIs(t, err, vfs.ErrFault)
	require.Equal(t, size, s.Size(), "a failed append changes nothing")
	require.Equal(t, next, s.NextOffset())
	s.closeFiles()
	s.closed = true
}

// TestFailedIndexEntryWrite fails the writes of index entries (an error in
// a sparse index file, where its blocks cannot be reserved and the disk is
// full): the appends still succeed, the
// segment is only indexed more sparsely, and reads and recovery find every
// record.
func TestFailedIndexEntryWrite(t *testing.T) {
	fx, m := memFixture(t)
	cfg := Config{MaxBytes: 1 << 20, IndexIntervalBytes: 200}
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(9, 9)), 10, 3, 100)
	entries, _ := s.IndexEntries()
	m.SetInjector(func(op vfs.Op, path string) error {
		if (op == vfs.OpWrite || op == vfs.OpWriteMap) && filepath.Ext(path) != LogSuffix {
			return vfs.ErrInjected
		}
		return nil
	})
	written = append(written, appendRandom(t, s, rand.New(rand.NewPCG(9, 10)), 10, 3, 100)...)
	m.SetInjector(nil)
	after, _ := s.IndexEntries()
	require.Equal(t, entries, after, "no entry while the writes fail")
	written = append(written, appendRandom(t, s, rand.New(rand.NewPCG(9, 11)), 10, 3, 100)...)
	after, _ = s.IndexEntries()
	require.Greater(t, after, entries, "entries again once they do not")
	for _, b := range written {
		requireRecords(t, []writtenBatch{b}, b.recs[0].Offset, readAll(t, s, b.recs[0].Offset, 1)[:len(b.recs)])
	}
	requireRecords(t, written, 0, readAll(t, s, 0, 1<<30))
	require.NoError(t, s.Close())
}

// TestIndexesOnFullDisk fails every reservation of room in the index files
// with ENOSPC. Before the first append the time index has no room for the
// entry Seal writes, so the append fails and changes nothing. Once the
// indexes have room, appends go on after it is used up, only indexed more
// sparsely, and Close still writes the final time-index entry into the slot
// kept for it, so the reopened segment knows its max timestamp.
func TestIndexesOnFullDisk(t *testing.T) {
	const page = 4096 // what an index file reserves first
	fx, m := memFixture(t)
	cfg := Config{MaxBytes: 1 << 20, IndexIntervalBytes: 200}
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	noIndexRoom := func(op vfs.Op, path string) error {
		if op == vfs.OpAllocate && filepath.Ext(path) != LogSuffix {
			return syscall.ENOSPC
		}
		return nil
	}
	m.SetInjector(noIndexRoom)
	err = s.Append(encode(t, makeRecords(0, 3, 100, 1_700_000_000_000)))
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Zero(t, s.Size(), "a refused append changes nothing")
	require.Zero(t, s.NextOffset())

	m.SetInjector(nil)
	written := appendRandom(t, s, rand.New(rand.NewPCG(3, 1)), 10, 3, 100)
	m.SetInjector(noIndexRoom)
	written = append(written, appendRandom(t, s, rand.New(rand.NewPCG(3, 2)), 2000, 3, 100)...)
	offsets, times := s.IndexEntries()
	require.Equal(t, page/index.OffsetEntrySize, offsets, "the offset index fills its reserved page, then stops")
	require.Equal(t, page/index.TimeEntrySize-1, times, "the time index keeps its last reserved slot")
	maxTS := s.MaxTimestamp()
	require.NoError(t, s.Close())

	m.SetInjector(nil)
	r, err := Open(fx.fsys, fx.dir, 0, cfg, false)
	require.NoError(t, err)
	defer r.Close()
	_, times = r.IndexEntries()
	require.Equal(t, page/index.TimeEntrySize, times, "the final entry went into the kept slot")
	require.Equal(t, maxTS, r.MaxTimestamp())
	requireRecords(t, written, 0, readAll(t, r, 0, 1<<30))
}
