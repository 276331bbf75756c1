package segment

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// alikeRecords returns n records from offset first whose encodings all
// take the same bytes: a fixed-width key, a value of valueSize bytes and
// one timestamp.
func alikeRecords(first int64, n, valueSize int) []log.Record {
	recs := make([]log.Record, n)
	for i := range recs {
		off := first + int64(i)
		recs[i] = log.Record{Offset: off, Key: fmt.Appendf(nil, "k%09d", off), Value: valueFor(off, valueSize)}
		recs[i].Timestamp = recs[0].Timestamp
	}
	return recs
}

// memSegment creates a segment of base 0 with cfg on a fresh in-memory
// file system, closed when the test ends.
func memSegment(t *testing.T, cfg Config) *Segment {
	t.Helper()
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// placedBatch is where a test appended a batch.
type placedBatch struct {
	pos, size, base, span int64
}

// appendAlike appends a batch of n records of valueSize bytes at the
// segment's next offset plus gap, and returns where it went.
func appendAlike(t *testing.T, s *Segment, gap int64, n, valueSize int) placedBatch {
	t.Helper()
	b := encode(t, alikeRecords(s.NextOffset()+gap, n, valueSize))
	pos := s.Size()
	require.NoError(t, s.Append(b))
	return placedBatch{pos: pos, size: int64(len(b)), base: s.NextOffset() - int64(n), span: int64(n)}
}

// requireRun checks every offset of batches against the segment's run:
// the lookup finds exactly the offsets of the batches from index from on
// (none if from is -1), each in the batch that holds it.
func requireRun(t *testing.T, s *Segment, batches []placedBatch, from int) {
	t.Helper()
	end := s.Size()
	for i, b := range batches {
		for o := b.base; o < b.base+b.span; o++ {
			got, ok := s.alike.lookup(o, s.Base(), end)
			if from < 0 || i < from {
				require.False(t, ok, "offset %d of batch %d: outside the run (from %d), found %+v", o, i, from, got)
				continue
			}
			require.True(t, ok, "offset %d of batch %d: in the run from batch %d", o, i, from)
			require.Equal(t, runBatch(b), got, "offset %d", o)
		}
		// Every offset reads back from its batch, through the run or not.
		c, err := s.CursorAt(b.base + b.span/2)
		require.NoError(t, err)
		h, _, err := c.Next()
		require.NoError(t, err)
		require.Equal(t, b.base, h.BaseOffset, "batch %d", i)
	}
	// Past the published batches there is nothing to find.
	_, ok := s.alike.lookup(s.NextOffset(), s.Base(), end)
	require.False(t, ok)
}

// TestAlikeRun checks which batches a segment finds without its index: the
// run of alike batches (one size, one number of offsets, each following
// the last) appended last, started by a batch of at least alikeMinBatch
// bytes, and ended by a batch that is not alike, which starts the next
// run if it is large enough.
func TestAlikeRun(t *testing.T) {
	eachFS(t, func(t *testing.T, fx fixture) {
		s, err := Create(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes})
		require.NoError(t, err)
		defer s.Close()
		var batches []placedBatch
		add := func(n, valueSize, wantFrom int) {
			t.Helper()
			batches = append(batches, appendAlike(t, s, 0, n, valueSize))
			requireRun(t, s, batches, wantFrom)
		}
		// Small batches, alike or not, start no run.
		add(1, 100, -1)
		add(1, 100, -1)
		add(3, 10, -1)
		// Large ones do, and extend it while they are alike.
		add(40, 150, 3)
		require.GreaterOrEqual(t, batches[3].size, int64(alikeMinBatch))
		add(40, 150, 3)
		add(40, 150, 3)
		// One record more: the run starts again there.
		add(41, 150, 6)
		add(41, 150, 6)
		// A value a byte longer, the same number of records.
		add(41, 151, 8)
		// A small batch ends the run and starts none.
		add(1, 150, -1)
		add(40, 150, 10)
		add(40, 150, 10)
	})
}

// TestAlikeRunGap checks that a batch starting past the offset after the
// last one (a gap, as compaction leaves) starts a run of its own, and that
// the gap's offsets are not found in it.
func TestAlikeRunGap(t *testing.T) {
	s := memSegment(t, Config{MaxBytes: testMaxBytes, AllowGaps: true})
	batches := []placedBatch{appendAlike(t, s, 0, 40, 150), appendAlike(t, s, 0, 40, 150)}
	requireRun(t, s, batches, 0)
	batches = append(batches, appendAlike(t, s, 7, 40, 150))
	requireRun(t, s, batches, 2)
	for o := int64(80); o < 87; o++ {
		_, ok := s.alike.lookup(o, s.Base(), s.Size())
		require.False(t, ok, "offset %d of the gap", o)
	}
	batches = append(batches, appendAlike(t, s, 0, 40, 150))
	requireRun(t, s, batches, 2)
}

// TestAlikeRunForgotten checks that a segment cut back (truncate), or
// whose state is rebuilt from its file (Recover), forgets its run, and
// that batches of another size appended after it start a new one, found
// where they are.
func TestAlikeRunForgotten(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forget func(s *Segment, batches []placedBatch) ([]placedBatch, error)
	}{
		{"truncate", func(s *Segment, batches []placedBatch) ([]placedBatch, error) {
			return batches[:2], s.truncate(batches[2].base)
		}},
		{"recover", func(s *Segment, batches []placedBatch) ([]placedBatch, error) {
			_, err := s.Recover()
			return batches, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := memSegment(t, Config{MaxBytes: testMaxBytes})
			var batches []placedBatch
			for range 4 {
				batches = append(batches, appendAlike(t, s, 0, 40, 150))
			}
			requireRun(t, s, batches, 0)
			batches, err := tc.forget(s, batches)
			require.NoError(t, err)
			requireRun(t, s, batches, -1)
			kept := len(batches)
			for range 3 {
				batches = append(batches, appendAlike(t, s, 0, 30, 200))
			}
			requireRun(t, s, batches, kept)
		})
	}
}

// TestAlikeRunConcurrent has readers look up random published offsets
// while the writer appends runs of alike batches of changing shapes, and
// checks that each lookup lands in the batch that holds its offset, with
// the record written there.
func TestAlikeRunConcurrent(t *testing.T) {
	s := memSegment(t, Config{MaxBytes: testMaxBytes})
	const appends = 400
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := range 3 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 19))
			for !done.Load() {
				next := s.NextOffset()
				if next == 0 {
					continue
				}
				o := rng.Int64N(next)
				c, err := s.CursorAt(o)
				if err != nil {
					errs <- err
					return
				}
				h, batch, err := c.Next()
				if err != nil {
					errs <- err
					return
				}
				if h.BaseOffset > o || h.LastOffset() < o {
					errs <- fmt.Errorf("offset %d: batch [%d, %d]", o, h.BaseOffset, h.LastOffset())
					return
				}
				it, err := log.NewRecordIterHeader(batch, h)
				if err != nil {
					errs <- err
					return
				}
				var rec log.Record
				for it.Next(&rec) {
					if rec.Offset == o {
						if want := fmt.Appendf(nil, "k%09d", o); string(rec.Key) != string(want) {
							errs <- fmt.Errorf("offset %d: key %q, want %q", o, rec.Key, want)
							return
						}
					}
				}
			}
		})
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < appends; {
		n, size, run := 30+rng.IntN(3), 140+rng.IntN(3), 1+rng.IntN(6)
		if rng.IntN(4) == 0 {
			n = 1 // a small batch now and then
		}
		for range run {
			appendAlike(t, s, 0, n, size)
			i++
		}
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
