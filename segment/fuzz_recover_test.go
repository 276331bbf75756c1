package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// fuzzBase is the base offset of the segments FuzzRecover recovers.
const fuzzBase = 1000

// FuzzRecover takes arbitrary bytes as the .log file of a segment whose
// indexes are missing, on the in-memory file system, and recovers it
// (OpenRecover), with and without gaps in offsets allowed. Recovery must not
// panic or fail, and must keep exactly the longest prefix of valid batches:
// each kept batch passes log.CheckBatch, starts where the one before ended
// (or past it, with gaps), and the first batch after them does not. Reads
// of what was kept return it, and recovering again, or opening the closed
// segment trusted, changes nothing. Each input is tried as it is and, so
// that mutations reach offsets and lengths instead of stopping at the
// CRC, once more with the CRC of every v2 batch the walk reaches
// recomputed. The seeds are valid batches, a torn tail, a damaged CRC, a
// preallocated zero tail, bytes after zeros and offsets that go back.
func FuzzRecover(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 5))
	var valid []byte
	next := int64(fuzzBase)
	for range 4 {
		recs := makeRecords(next, 1+r.IntN(3), r.IntN(40), 1_700_000_000_000+next)
		valid = append(valid, encode(f, recs)...)
		next += int64(len(recs))
	}
	damaged := slices.Clone(valid)
	damaged[len(damaged)/2] ^= 0x10
	backwards := append(slices.Clone(valid), valid...)
	afterZeros := append(append(slices.Clone(valid), make([]byte, 200)...), 7)
	gap := append(slices.Clone(valid), encode(f, makeRecords(next+5, 2, 10, 1_700_000_000_100))...)
	for _, seed := range [][]byte{
		nil,
		valid,
		valid[:len(valid)-9],
		valid[:30],
		damaged,
		append(slices.Clone(valid), make([]byte, 4096)...),
		afterZeros,
		backwards,
		gap,
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, gaps bool) {
		checkRecover(t, data, gaps)
		if fixed, ok := fixCRCs(data); ok {
			checkRecover(t, fixed, gaps)
		}
	})
}

// checkRecover recovers data as a segment's .log file and checks the result
// against an independent walk of its batches (see FuzzRecover).
func checkRecover(t *testing.T, data []byte, gaps bool) {
	cfg := smallIndexes
	cfg.AllowGaps = gaps
	m := vfs.NewMem()
	require.NoError(t, m.MkdirAll("d", 0o755))
	path := filepath.Join("d", FileName(fuzzBase, LogSuffix))
	writeFile(t, m, path, data)

	s, rec, err := OpenRecover(m, "d", fuzzBase, cfg)
	require.NoError(t, err)

	// The longest valid prefix, walked without the segment's code.
	want := walkValid(data, gaps)
	require.Equal(t, want.batches, rec.Batches)
	require.Equal(t, want.bytes, rec.Bytes)
	require.Equal(t, want.next, s.NextOffset())
	require.Equal(t, want.bytes, s.Size())
	require.Equal(t, int64(len(data)), rec.Bytes+rec.Truncated+rec.ZeroTail)
	if rest := data[want.bytes:]; !bytes.ContainsFunc(rest, func(c rune) bool { return c != 0 }) {
		// Nothing, or zeros that preallocation left.
		require.Equal(t, int64(len(rest)), rec.ZeroTail)
		require.NoError(t, rec.Reason)
	} else {
		require.Equal(t, int64(len(rest)), rec.Truncated)
		require.True(t, errors.Is(rec.Reason, ErrCorrupt) || errors.Is(rec.Reason, log.ErrIncomplete),
			"reason %v", rec.Reason)
	}
	requireBytes(t, data[:want.bytes], readFile(t, m, path), "the file is cut at the prefix")

	// Reads return the kept batches, byte for byte, and no error.
	got, err := s.Read(nil, math.MinInt64, math.MaxInt32)
	require.NoError(t, err)
	for len(got) < int(want.bytes) {
		h, err := log.ReadHeader(data[len(got):])
		require.NoError(t, err)
		more, err := s.Read(nil, h.BaseOffset, math.MaxInt32)
		require.NoError(t, err)
		require.NotEmpty(t, more)
		got = append(got, more...)
	}
	requireBytes(t, data[:want.bytes], got, "the kept batches")
	for _, off := range append(want.bases, fuzzBase-1, want.next, want.next+1, math.MaxInt64) {
		batches, err := s.Read(nil, off, 1)
		require.NoError(t, err, "read at %d", off)
		if off >= want.next {
			require.Empty(t, batches, "read at %d", off)
		}
	}
	for _, ts := range []int64{math.MinInt64, -1, 0, s.MaxTimestamp()} {
		_, _, _, err := s.FindOffsetByTimestamp(ts, fuzzBase, math.MaxInt64, &log.Decoder{})
		// The batches passed their CRCs: only their records can fail to
		// decode, and say so.
		if err != nil {
			require.True(t, errors.Is(err, log.ErrCorrupt) || errors.Is(err, log.ErrUnsupportedCompression) ||
				errors.Is(err, log.ErrUnsupportedFormat) || errors.Is(err, log.ErrTooLarge), "timestamp %d: %v", ts, err)
		}
	}
	offsets, times := indexEntries(s)
	maxTS := s.MaxTimestamp()
	require.NoError(t, s.Close())

	// Recovering again finds nothing to cut and rebuilds the same indexes.
	s, rec, err = OpenRecover(m, "d", fuzzBase, cfg)
	require.NoError(t, err)
	require.Equal(t, Recovery{Batches: want.batches, Bytes: want.bytes}, rec)
	require.Equal(t, want.next, s.NextOffset())
	require.Equal(t, maxTS, s.MaxTimestamp())
	o2, t2 := indexEntries(s)
	require.Equal(t, offsets, o2)
	require.Equal(t, times, t2)
	require.NoError(t, s.Close())
	requireBytes(t, data[:want.bytes], readFile(t, m, path), "recovering again cuts nothing")

	// The closed segment opens trusted, as it was.
	s, err = Open(m, "d", fuzzBase, cfg, false)
	require.NoError(t, err)
	require.Equal(t, want.next, s.NextOffset())
	require.Equal(t, want.bytes, s.Size())
	require.Equal(t, maxTS, s.MaxTimestamp())
	require.NoError(t, s.Damaged())
	require.NoError(t, s.Close())
}

// prefix is the longest run of valid batches at the start of a file.
type prefix struct {
	batches int
	bytes   int64
	next    int64   // the offset after the last batch, fuzzBase if none
	bases   []int64 // the base offset of each batch
}

// walkValid walks data's batches from the start and stops at the first that
// fails log.CheckBatch, does not follow the one before (at its next offset,
// or past it with gaps), or whose last offset does not fit the segment.
func walkValid(data []byte, gaps bool) prefix {
	p := prefix{next: fuzzBase}
	for {
		h, err := log.CheckBatch(data[p.bytes:])
		switch {
		case err != nil,
			h.BaseOffset < p.next,
			!gaps && h.BaseOffset != p.next,
			h.LastOffset()-fuzzBase > math.MaxInt32:
			return p
		}
		p.batches++
		p.bytes += int64(h.Size())
		p.next = h.NextOffset()
		p.bases = append(p.bases, h.BaseOffset)
	}
}

// fixCRCs returns a copy of data with the CRC-32C of every v2 batch recomputed,
// walking the batches as their headers give their lengths, and whether it
// changed anything.
func fixCRCs(data []byte) ([]byte, bool) {
	out := slices.Clone(data)
	changed := false
	for pos := 0; pos < len(out); {
		h, err := log.ReadHeader(out[pos:])
		if err != nil || h.Magic != log.Magic || pos+h.Size() > len(out) {
			break
		}
		b := out[pos : pos+h.Size()]
		crc := crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli))
		if binary.BigEndian.Uint32(b[17:]) != crc {
			binary.BigEndian.PutUint32(b[17:], crc)
			changed = true
		}
		pos += h.Size()
	}
	return out, changed
}

// requireBytes is require.Equal for bytes, where nil and empty are the same.
func requireBytes(t *testing.T, want, got []byte, what string) {
	t.Helper()
	if !bytes.Equal(want, got) {
		require.Equal(t, want, got, what)
	}
}
