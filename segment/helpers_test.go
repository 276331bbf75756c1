package segment

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// fixture is a test's file system and segment directory.
type fixture struct {
	fsys vfs.FS
	dir  string
}

// eachFS runs fn on the OS file system (in a temporary directory) and on the
// in-memory one.
func eachFS(t *testing.T, fn func(t *testing.T, fx fixture)) {
	t.Run("fs=os", func(t *testing.T) { fn(t, fixture{vfs.OS, t.TempDir()}) })
	t.Run("fs=mem", func(t *testing.T) {
		m := vfs.NewMem()
		require.NoError(t, m.MkdirAll("p-0", 0o755))
		fn(t, fixture{m, "p-0"})
	})
}

// memFixture is a fixture on a fresh in-memory file system.
func memFixture(t testing.TB) (fixture, *vfs.Mem) {
	t.Helper()
	m := vfs.NewMem()
	require.NoError(t, m.MkdirAll("p-0", 0o755))
	return fixture{m, "p-0"}, m
}

// makeRecords returns n records with keys and values derived from the first
// offset, so any record's expected content is known from its offset.
func makeRecords(first int64, n, valueSize int, ts int64) []log.Record {
	recs := make([]log.Record, n)
	for i := range recs {
		off := first + int64(i)
		recs[i] = log.Record{
			Offset:    off,
			Timestamp: time.UnixMilli(ts + int64(i)),
			Key:       fmt.Appendf(nil, "key-%d", off),
			Value:     valueFor(off, valueSize),
		}
	}
	return recs
}

// valueFor is the value of the record at offset off.
func valueFor(off int64, size int) []byte {
	v := make([]byte, size)
	r := rand.New(rand.NewPCG(uint64(off), 7))
	for i := range v {
		v[i] = byte(r.UintN(256))
	}
	return v
}

// encode returns recs as one batch stamped with base offset base.
func encode(t testing.TB, recs []log.Record) []byte {
	b, err := log.EncodeBatch(nil, recs, log.BatchOptions{})
	require.NoError(t, err)
	log.SetBaseOffset(b, recs[0].Offset)
	return b
}

// writtenBatch is one batch a test appended, with its records.
type writtenBatch struct {
	bytes []byte
	recs  []log.Record
}

// appendRandom appends count batches of random shapes to s and returns them.
func appendRandom(t testing.TB, s *Segment, r *rand.Rand, count, maxRecords, maxValue int) []writtenBatch {
	var out []writtenBatch
	for range count {
		n := 1 + r.IntN(maxRecords)
		recs := makeRecords(s.NextOffset(), n, r.IntN(maxValue+1), 1_700_000_000_000+s.NextOffset()*10)
		b := encode(t, recs)
		require.NoError(t, s.Append(b))
		out = append(out, writtenBatch{b, recs})
	}
	return out
}

// readAll reads every record of s from offset from, through Read with the
// given byte budget, and checks what it returns.
func readAll(t testing.TB, s *Segment, from int64, maxBytes int) []log.Record {
	t.Helper()
	var out []log.Record
	var buf []byte
	for from < s.NextOffset() {
		batches, err := s.Read(buf, from, maxBytes)
		require.NoError(t, err)
		if len(batches) == 0 {
			break
		}
		buf = batches[:0]
		for rest := batches; len(rest) > 0; {
			it, err := log.NewRecordIter(rest)
			require.NoError(t, err)
			var r log.Record
			for it.Next(&r) {
				if r.Offset >= from {
					out = append(out, cloneRecord(r))
				}
			}
			require.NoError(t, it.Err())
			h := it.Header()
			rest = rest[h.Size():]
			from = h.NextOffset()
		}
	}
	return out
}

func cloneRecord(r log.Record) log.Record {
	r.Key = bytes.Clone(r.Key)
	r.Value = bytes.Clone(r.Value)
	r.Headers = nil
	return r
}

// requireRecords checks that got are exactly the records of want from offset
// from on.
func requireRecords(t testing.TB, want []writtenBatch, from int64, got []log.Record) {
	t.Helper()
	var exp []log.Record
	for _, b := range want {
		for _, r := range b.recs {
			if r.Offset >= from {
				exp = append(exp, r)
			}
		}
	}
	require.Equal(t, len(exp), len(got), "record count from offset %d", from)
	for i := range exp {
		requireSameRecord(t, exp[i], got[i])
	}
}

func requireSameRecord(t testing.TB, want, got log.Record) {
	t.Helper()
	require.Equal(t, want.Offset, got.Offset)
	require.Equal(t, want.Timestamp.UnixMilli(), got.Timestamp.UnixMilli(), "timestamp of offset %d", want.Offset)
	require.Equal(t, want.Key, got.Key, "key of offset %d", want.Offset)
	require.Equal(t, want.Value, got.Value, "value of offset %d", want.Offset)
}

// concat joins the bytes of batches.
func concat(batches []writtenBatch) []byte {
	var out []byte
	for _, b := range batches {
		out = append(out, b.bytes...)
	}
	return out
}

// indexEntries lists both indexes of s.
func indexEntries(s *Segment) (offsets [][2]int64, times [][2]int64) {
	for i := range s.offsets.Entries() {
		o, p := s.offsets.Entry(i)
		offsets = append(offsets, [2]int64{o, int64(p)})
	}
	for i := range s.times.Entries() {
		ts, o := s.times.Entry(i)
		times = append(times, [2]int64{ts, o})
	}
	return offsets, times
}

// testMaxBytes bounds test segments: the in-memory file system reserves a
// writable segment's whole mapping in memory.
const testMaxBytes = 16 << 20

// wrapFS is a file system whose OpenFile hands each file it opens, and the
// name it was opened by, to wrap, and returns what wrap returns.
type wrapFS struct {
	vfs.FS
	wrap func(name string, f vfs.File) vfs.File
}

func (w wrapFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := w.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return w.wrap(name, f), nil
}
