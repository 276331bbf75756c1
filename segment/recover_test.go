package segment

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// smallIndexes keeps the preallocated index files small, so that tests that
// build thousands of segments stay fast.
var smallIndexes = Config{MaxBytes: 64 << 10, IndexIntervalBytes: 256, MaxIndexBytes: 4096}

func writeFile(t testing.TB, fsys vfs.FS, path string, b []byte) {
	t.Helper()
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	require.NoError(t, err)
	_, err = f.WriteAt(b, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func readFile(t testing.TB, fsys vfs.FS, path string) []byte {
	t.Helper()
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	size, err := f.Size()
	require.NoError(t, err)
	b := make([]byte, size)
	_, err = f.ReadAt(b, 0)
	require.NoError(t, err)
	return b
}

// validPrefix returns the batches of written that lie wholly in the first n
// bytes.
func validPrefix(written []writtenBatch, n int) []writtenBatch {
	var out []writtenBatch
	pos := 0
	for _, b := range written {
		if pos+len(b.bytes) > n {
			break
		}
		pos += len(b.bytes)
		out = append(out, b)
	}
	return out
}

// buildFresh appends batches to a new segment in its own file system and
// returns it, the reference that recovery must reproduce.
func buildFresh(t testing.TB, base int64, batches []writtenBatch) *Segment {
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, base, smallIndexes)
	require.NoError(t, err)
	for _, b := range batches {
		require.NoError(t, s.Append(b.bytes))
	}
	return s
}

// TestRecoverTornTail cuts the log at every byte inside its last batches,
// leaves index files full of garbage as a crash would, and recovers: the
// result is always the longest valid prefix, with indexes equal to a fresh
// rebuild.
func TestRecoverTornTail(t *testing.T) {
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 1000, smallIndexes)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(11, 11)), 40, 8, 60)
	full := concat(written)
	require.NoError(t, s.Close())

	tail := len(written[len(written)-1].bytes) + len(written[len(written)-2].bytes) + len(written[len(written)-3].bytes)
	garbage := bytes.Repeat([]byte{0xA5}, 4096)
	for cut := len(full) - tail; cut <= len(full); cut++ {
		m := vfs.NewMem()
		require.NoError(t, m.MkdirAll("d", 0o755))
		writeFile(t, m, filepath.Join("d", FileName(1000, LogSuffix)), full[:cut])
		writeFile(t, m, filepath.Join("d", FileName(1000, IndexSuffix)), garbage)
		writeFile(t, m, filepath.Join("d", FileName(1000, TimeIndexSuffix)), garbage)

		_, err := Open(m, "d", 1000, smallIndexes, false)
		require.ErrorIs(t, err, ErrCorrupt, "cut %d: a garbage index is caught by the shape check", cut)
		r, _, err := OpenRecover(m, "d", 1000, smallIndexes)
		require.NoError(t, err)

		prefix := validPrefix(written, cut)
		fresh := buildFresh(t, 1000, prefix)
		require.Equal(t, fresh.NextOffset(), r.NextOffset(), "cut %d", cut)
		require.Equal(t, fresh.Size(), r.Size(), "cut %d", cut)
		require.Equal(t, fresh.MaxTimestamp(), r.MaxTimestamp(), "cut %d", cut)
		o1, t1 := indexEntries(r)
		o2, t2 := indexEntries(fresh)
		require.Equal(t, o2, o1, "cut %d: offset index equals a fresh rebuild", cut)
		require.Equal(t, t2, t1, "cut %d: time index equals a fresh rebuild", cut)
		requireRecords(t, prefix, 1000, readAll(t, r, 1000, 1<<20))
		require.Equal(t, full[:r.Size()], readFile(t, m, filepath.Join("d", FileName(1000, LogSuffix))), "the file is cut at the prefix")
		require.NoError(t, r.Close())
		require.NoError(t, fresh.Close())
	}
}

// TestRecoverZeroTail: a preallocated or zero-extended tail is cut off.
func TestRecoverZeroTail(t *testing.T) {
	fx, m := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, smallIndexes)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(2, 2)), 10, 4, 50)
	require.NoError(t, s.Close())
	path := filepath.Join(fx.dir, FileName(0, LogSuffix))
	writeFile(t, m, path, append(concat(written), make([]byte, 10_000)...))
	_, err = Open(m, fx.dir, 0, smallIndexes, false)
	require.ErrorIs(t, err, ErrCorrupt, "a trusted open reads the headers after the last index entry")
	s, rec, err := OpenRecover(m, fx.dir, 0, smallIndexes)
	require.NoError(t, err)
	require.Equal(t, int64(10_000), rec.ZeroTail, "zeros are what preallocation left, not damage")
	require.Zero(t, rec.Truncated)
	require.NoError(t, rec.Reason)
	requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
	require.NoError(t, s.Close())
	require.Equal(t, concat(written), readFile(t, m, path), "the zeros are cut off")

	// Bytes after the zeros (pages written back out of order, or damage)
	// are cut too, but as damage: the recovery says so.
	for _, at := range []int{1, 100, 4095, 4096, 9_999} { // 1: not even a zero header
		tail := make([]byte, 10_000)
		tail[at] = 7
		writeFile(t, m, path, append(concat(written), tail...))
		s, rec, err = OpenRecover(m, fx.dir, 0, smallIndexes)
		require.NoError(t, err)
		require.Zero(t, rec.ZeroTail, "at %d", at)
		require.Equal(t, int64(10_000), rec.Truncated, "at %d", at)
		require.ErrorIs(t, rec.Reason, ErrCorrupt, "at %d", at)
		requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
		require.NoError(t, s.Close())
	}
}

// TestPreallocate: a preallocated segment's file is MaxBytes long while it
// is written, trimmed when sealed, and recovery after a crash keeps every
// synced batch and cuts the zeros.
func TestPreallocate(t *testing.T) {
	fx, m := memFixture(t)
	cfg := smallIndexes
	cfg.Preallocate = true
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	path := filepath.Join(fx.dir, FileName(0, LogSuffix))
	written := appendRandom(t, s, rand.New(rand.NewPCG(3, 1)), 10, 4, 50)
	require.Equal(t, int64(len(concat(written))), s.Size(), "Size is the batches, not the file")
	require.Len(t, readFile(t, m, path), int(cfg.MaxBytes), "the file is preallocated")
	require.NoError(t, s.Sync())

	after := m.Crash()
	r, rec, err := OpenRecover(after, fx.dir, 0, cfg)
	require.NoError(t, err)
	require.Zero(t, rec.Truncated)
	require.Equal(t, cfg.MaxBytes-s.Size(), rec.ZeroTail)
	requireRecords(t, written, 0, readAll(t, r, 0, 1<<20))
	more := appendRandom(t, r, rand.New(rand.NewPCG(3, 2)), 3, 2, 10)
	require.Len(t, readFile(t, after, path), int(cfg.MaxBytes), "preallocated again after recovery")
	require.NoError(t, r.Close())
	require.Equal(t, append(concat(written), concat(more)...), readFile(t, after, path), "Close trims the file")
}

// TestFlippedBytes flips each byte of a small segment in turn. Reads of the
// trusted segment and recovery never panic and never return a record that
// differs from what was written: damage is ErrCorrupt or a cut tail. The
// header bytes the CRC does not cover are held to their own rules (offsets
// follow one another, lengths fit, magic is 2); only the partition leader
// epoch, which no reader uses, may change unnoticed.
func TestFlippedBytes(t *testing.T) {
	fx, m := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, flipConfig)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(4, 4)), 8, 4, 20)
	full := concat(written)
	require.NoError(t, s.Close())
	files := map[string][]byte{}
	for _, suffix := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
		files[suffix] = readFile(t, m, filepath.Join(fx.dir, FileName(0, suffix)))
	}
	epochBytes := map[int]bool{} // the partition leader epoch of each batch
	for pos, b := range written {
		_ = b
		start := len(concat(written[:pos]))
		for j := 12; j < 16; j++ {
			epochBytes[start+j] = true
		}
	}
	truth := map[int64]log.Record{}
	for _, b := range written {
		for _, r := range b.recs {
			truth[r.Offset] = r
		}
	}
	requireTrue := func(t *testing.T, recs []log.Record) {
		for _, r := range recs {
			want, ok := truth[r.Offset]
			require.True(t, ok, "offset %d was never written", r.Offset)
			requireSameRecord(t, want, r)
		}
	}
	readAllOrErr := func(s *Segment, from int64) ([]log.Record, error) {
		var out []log.Record
		for from < s.NextOffset() {
			batches, err := s.Read(nil, from, 1<<20)
			if err != nil || len(batches) == 0 {
				return out, err
			}
			for rest := batches; len(rest) > 0; {
				it, err := log.NewRecordIter(rest)
				if err != nil {
					return out, err
				}
				var r log.Record
				for it.Next(&r) {
					if r.Offset >= from {
						out = append(out, cloneRecord(r))
					}
				}
				if it.Err() != nil {
					return out, it.Err()
				}
				rest = rest[it.Header().Size():]
				from = it.Header().NextOffset()
			}
		}
		return out, nil
	}

	for i := range full {
		for _, mask := range []byte{0x01, 0x80, 0xFF} {
			fs := vfs.NewMem()
			require.NoError(t, fs.MkdirAll("d", 0o755))
			for suffix, b := range files {
				if suffix == LogSuffix {
					b = bytes.Clone(b)
					b[i] ^= mask
				}
				writeFile(t, fs, filepath.Join("d", FileName(0, suffix)), b)
			}

			// The trusted read path.
			if r, err := Open(fs, "d", 0, flipConfig, false); err != nil {
				require.ErrorIs(t, err, ErrCorrupt, "byte %d mask %#x", i, mask)
			} else {
				for from := int64(0); from < r.NextOffset(); from += 4 {
					recs, err := readAllOrErr(r, from)
					if err != nil {
						require.Truef(t, errors.Is(err, ErrCorrupt), "byte %d mask %#x: %v", i, mask, err)
					}
					requireTrue(t, recs)
				}
				require.NoError(t, r.Close())
			}

			// Recovery keeps a prefix of the truth.
			r, rec, err := OpenRecover(fs, "d", 0, flipConfig)
			require.NoError(t, err)
			if epochBytes[i] {
				require.Equal(t, int64(len(full)), rec.Bytes, "byte %d: the leader epoch is not checked", i)
			} else {
				require.LessOrEqual(t, rec.Bytes, int64(i), "byte %d mask %#x: recovery stops at the damaged batch", i, mask)
			}
			recs, err := readAllOrErr(r, 0)
			require.NoError(t, err)
			requireTrue(t, recs)
			require.NoError(t, r.Close())
		}
	}
}

// TestCrashAtEveryOperation crashes the in-memory file system at the k-th
// write, sync or truncate of a workload, for every k, then recovers. Every
// batch whose Sync returned before the crash is there, byte for byte; offsets
// stay dense; nothing else is returned.
func TestCrashAtEveryOperation(t *testing.T) {
	workload := func(s *Segment, acked *int, written *[]writtenBatch, r *rand.Rand) {
		for i := range 30 {
			recs := makeRecords(s.NextOffset(), 1+r.IntN(4), r.IntN(200), int64(i))
			b := encode(t, recs)
			if s.Append(b) != nil {
				return
			}
			*written = append(*written, writtenBatch{b, recs})
			if i%3 == 2 {
				if s.Sync() != nil {
					return
				}
				*acked = len(*written)
			}
		}
		if s.Seal() == nil && s.Sync() == nil {
			*acked = len(*written)
		}
	}
	ops := []vfs.Op{vfs.OpWrite, vfs.OpWriteMap, vfs.OpAllocate, vfs.OpSync, vfs.OpSyncMap, vfs.OpTruncate, vfs.OpSyncDir}

	// Count the operations of a clean run.
	fx, m := memFixture(t)
	m.SetInjector(vfs.FailAfter(1<<30, ops...))
	s, err := Create(fx.fsys, fx.dir, 0, smallIndexes)
	require.NoError(t, err)
	var acked int
	var written []writtenBatch
	workload(s, &acked, &written, rand.New(rand.NewPCG(1, 1)))
	total := 0
	for _, op := range ops {
		total += m.Count(op)
	}
	require.Greater(t, total, 40)

	runsWithAcks := 0
	for k := 0; k <= total; k++ {
		for _, torn := range []string{"none", "prefix", "pages"} {
			fx, m := memFixture(t)
			m.SetInjector(vfs.FailAfter(k, ops...))
			acked, written = 0, nil
			rng := rand.New(rand.NewPCG(1, 1))
			if s, err := Create(fx.fsys, fx.dir, 0, smallIndexes); err == nil {
				workload(s, &acked, &written, rng)
			}
			var after *vfs.Mem
			switch torn {
			case "prefix":
				after = m.CrashKeepingPrefix(rand.New(rand.NewPCG(uint64(k), 3)))
			case "pages":
				after = m.CrashKeepingPages(rand.New(rand.NewPCG(uint64(k), 4)))
			default:
				after = m.Crash()
			}
			if _, err := after.Stat(filepath.Join(fx.dir, FileName(0, LogSuffix))); err != nil {
				require.Zero(t, acked, "k=%d: the segment file is gone but batches were acknowledged", k)
				continue
			}
			r, _, err := OpenRecover(after, fx.dir, 0, smallIndexes)
			require.NoError(t, err)
			got := readAll(t, r, 0, 1<<20)
			want := 0
			for _, b := range written[:acked] {
				want += len(b.recs)
			}
			require.GreaterOrEqual(t, len(got), want, "k=%d torn=%s: acknowledged records lost", k, torn)
			if want > 0 {
				runsWithAcks++
			}
			requireRecords(t, validPrefix(written, int(r.Size())), 0, got)
			require.Equal(t, int64(len(got)), r.NextOffset(), "k=%d: offsets dense from 0", k)
			require.NoError(t, r.Close())
		}
	}
	require.Greater(t, runsWithAcks, total, "most crash points come after some acknowledged batches")
}

// TestFailedWriteLeavesSegmentUsable injects a torn write, a full disk and a
// failed fsync, with appends copied into the mapping and with write calls:
// each fails its call, leaves size and next offset where they were, and the
// segment keeps working and recovers cleanly. With the mapping, a failure can
// only strike when an append needs the file grown: the test first fills what
// is reserved.
func TestFailedWriteLeavesSegmentUsable(t *testing.T) {
	tornWrite := func(m *vfs.Mem) {
		// Every write to the .log fails, the zeros' ahead of the batch and
		// the batch's own, and the reservation too (or an append would not
		// write at all).
		allocate := vfs.FailOnce(vfs.OpAllocate, LogSuffix)
		m.SetInjector(func(op vfs.Op, path string) error {
			if err := allocate(op, path); err != nil {
				return err
			}
			if op == vfs.OpWrite && strings.HasSuffix(path, LogSuffix) {
				return vfs.ErrInjected
			}
			return nil
		})
	}
	tests := []struct {
		name   string
		inject func(m *vfs.Mem)
		call   func(s *Segment, b []byte) error
		want   error
	}{
		{"torn write", tornWrite, func(s *Segment, b []byte) error { return s.Append(b) }, vfs.ErrInjected},
		{"disk full", func(m *vfs.Mem) { m.SetDiskLimit(m.DiskUsage() + 100) },
			func(s *Segment, b []byte) error { return s.Append(b) }, syscall.ENOSPC},
		{"failed fsync", func(m *vfs.Mem) { m.SetInjector(vfs.FailOnce(vfs.OpSync, LogSuffix)) },
			func(s *Segment, b []byte) error {
				if err := s.Append(b); err != nil {
					return err
				}
				return s.Sync()
			}, vfs.ErrInjected},
	}
	for _, writeCalls := range []bool{false, true} {
		cfg := smallIndexes
		cfg.MaxBytes = 1 << 20
		cfg.WriteCalls = writeCalls
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/writeCalls=%v", tt.name, writeCalls), func(t *testing.T) {
				fx, m := memFixture(t)
				s, err := Create(fx.fsys, fx.dir, 0, cfg)
				require.NoError(t, err)
				written := appendRandom(t, s, rand.New(rand.NewPCG(8, 8)), 5, 3, 50)
				for {
					recs := makeRecords(s.NextOffset(), 5, 500, 1)
					b := encode(t, recs)
					if s.Size()+int64(len(b)) > s.allocated {
						break
					}
					require.NoError(t, s.Append(b))
					written = append(written, writtenBatch{b, recs})
				}
				require.NoError(t, s.Sync())
				size, next := s.Size(), s.NextOffset()

				tt.inject(m)
				recs := makeRecords(next, 5, 500, 1)
				b := encode(t, recs)
				require.Less(t, s.allocated-s.Size(), int64(len(b)), "the append needs the file grown")
				err = tt.call(s, b)
				require.ErrorIs(t, err, tt.want)
				m.SetInjector(nil)
				m.SetDiskLimit(-1)
				if tt.name != "failed fsync" {
					require.Equal(t, size, s.Size(), "no half-advanced position")
					require.Equal(t, next, s.NextOffset())
					requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))
					require.NoError(t, s.Append(b), "the same append succeeds once the fault is gone")
				}
				require.NoError(t, s.Sync())
				written = append(written, writtenBatch{b, recs})
				requireRecords(t, written, 0, readAll(t, s, 0, 1<<20))

				after := m.Crash()
				r, rec, err := OpenRecover(after, fx.dir, 0, cfg)
				require.NoError(t, err)
				require.Zero(t, rec.Truncated, "nothing torn is left behind")
				requireRecords(t, written, 0, readAll(t, r, 0, 1<<20))
			})
		}
	}
}

// flipConfig indexes often, so that flipped bytes hit indexed batches too.
var flipConfig = Config{MaxBytes: 16 << 10, IndexIntervalBytes: 100, MaxIndexBytes: 4096}
