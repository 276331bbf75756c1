package segment

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// cursorRecords reads every record from offset from on through a Cursor,
// stopping at the first error.
func cursorRecords(s *Segment, from int64) ([]log.Record, error) {
	c, err := s.CursorAt(from)
	if err != nil {
		return nil, err
	}
	var out []log.Record
	for {
		h, batch, err := c.Next()
		if err != nil || batch == nil {
			return out, err
		}
		it, err := log.NewRecordIter(batch)
		if err != nil {
			return out, err
		}
		if it.Header() != h {
			panic("Next returned a header that is not its batch's")
		}
		var r log.Record
		for it.Next(&r) {
			if r.Offset >= from {
				out = append(out, cloneRecord(r))
			}
		}
		if err := it.Err(); err != nil {
			return out, err
		}
	}
}

func TestCursorReadsFromAnyOffset(t *testing.T) {
	tests := []struct {
		name                string
		interval            int
		maxRecords, maxSize int
	}{
		{"small batches", 200, 6, 80}, // scans between index entries
		{"large batches", 64, 8, 200}, // an entry per batch, mostly
		{"mixed", 300, 12, 120},       // both
		{"one entry", 1 << 20, 6, 80}, // no entries: a scan from the start
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachFS(t, func(t *testing.T, fx fixture) {
				testCursorReadsFromAnyOffset(t, fx, tt.interval, tt.maxRecords, tt.maxSize)
			})
		})
	}
}

func testCursorReadsFromAnyOffset(t *testing.T, fx fixture, interval, maxRecords, maxSize int) {
	s, err := Create(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes, IndexIntervalBytes: interval})
	require.NoError(t, err)
	defer s.Close()
	written := appendRandom(t, s, rand.New(rand.NewPCG(1, 2)), 60, maxRecords, maxSize)
	var offsets []int64
	for _, b := range written {
		first, last := b.recs[0].Offset, b.recs[len(b.recs)-1].Offset
		offsets = append(offsets, first, last, (first+last)/2)
	}
	offsets = append(offsets, 0, 99) // below the base: from the first batch
	for _, from := range offsets {
		got, err := cursorRecords(s, from)
		require.NoError(t, err)
		requireRecords(t, written, from, got)
	}
	got, err := cursorRecords(s, s.NextOffset())
	require.NoError(t, err)
	require.Empty(t, got, "at the end")
}

func TestCursorSeesLaterAppends(t *testing.T) {
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: testMaxBytes})
	require.NoError(t, err)
	defer s.Close()
	r := rand.New(rand.NewPCG(3, 3))
	c, err := s.CursorAt(0)
	require.NoError(t, err)
	_, batch, err := c.Next()
	require.NoError(t, err)
	require.Nil(t, batch, "an empty segment")

	for range 5 {
		w := appendRandom(t, s, r, 2, 4, 50)
		for _, want := range w {
			h, batch, err := c.Next()
			require.NoError(t, err)
			require.Equal(t, want.bytes, batch)
			require.Equal(t, want.recs[0].Offset, h.BaseOffset)
		}
		_, batch, err := c.Next()
		require.NoError(t, err)
		require.Nil(t, batch, "nothing past what was published")
	}

	// A cursor placed past the end waits there for the next batch.
	c, err = s.CursorAt(s.NextOffset() + 10)
	require.NoError(t, err)
	w := appendRandom(t, s, r, 1, 1, 10)
	_, batch, err = c.Next()
	require.NoError(t, err)
	require.Equal(t, w[0].bytes, batch)
}

func TestCursorAfterClose(t *testing.T) {
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: testMaxBytes})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = s.CursorAt(0)
	require.ErrorIs(t, err, ErrClosed)
}

// TestCursorFlippedBytes flips each byte of a small trusted segment in turn
// and reads it through cursors from every offset: a cursor never panics and
// never yields a record that differs from what was written.
func TestCursorFlippedBytes(t *testing.T) {
	fx, m := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, flipConfig)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(5, 5)), 6, 4, 12)
	require.NoError(t, s.Close())
	files := map[string][]byte{}
	for _, suffix := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
		files[suffix] = readFile(t, m, filepath.Join(fx.dir, FileName(0, suffix)))
	}
	truth := map[int64]log.Record{}
	for _, b := range written {
		for _, r := range b.recs {
			truth[r.Offset] = r
		}
	}
	full := files[LogSuffix]
	end := written[len(written)-1].recs[len(written[len(written)-1].recs)-1].Offset + 1
	damaged := 0
	for i := range full {
		fs := vfs.NewMem()
		require.NoError(t, fs.MkdirAll("d", 0o755))
		for suffix, b := range files {
			if suffix == LogSuffix {
				b = bytes.Clone(b)
				b[i] ^= 0x41
			}
			writeFile(t, fs, filepath.Join("d", FileName(0, suffix)), b)
		}
		s, err := Open(fs, "d", 0, flipConfig, false)
		if err != nil {
			damaged++
			continue
		}
		for from := int64(0); from < end; from++ {
			got, err := cursorRecords(s, from)
			if err != nil {
				damaged++
			}
			for _, r := range got {
				want, ok := truth[r.Offset]
				require.True(t, ok, "byte %d: offset %d was never written", i, r.Offset)
				requireSameRecord(t, want, r)
			}
		}
		require.NoError(t, s.Close())
	}
	require.Positive(t, damaged, "flips are noticed")
}
