package segment

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVerifiedTailSpan: a stretch grows at either end by adjoining
// batches only, from goroutines at once (run with -race), and cut and
// reset leave it at a batch boundary.
func TestVerifiedTailSpan(t *testing.T) {
	var tail verifiedTail
	tail.reset(1000)
	require.False(t, tail.holds(1000, 1001), "empty")
	require.False(t, tail.extend(1001, 1100), "a gap above")
	require.False(t, tail.extend(800, 999), "a gap below")
	var wg sync.WaitGroup
	wg.Go(func() {
		for p := int64(1000); p < 2000; p += 100 {
			require.True(t, tail.extend(p, p+100))
		}
	})
	wg.Go(func() {
		for p := int64(1000); p > 0; p -= 100 {
			require.True(t, tail.extend(p-100, p))
		}
	})
	wg.Wait()
	require.True(t, tail.holds(0, 2000))
	require.False(t, tail.holds(0, 2001))
	tail.cut(1500)
	require.True(t, tail.holds(0, 1500))
	require.False(t, tail.holds(1400, 1600))
	tail.cut(0)
	require.False(t, tail.holds(0, 1))
	require.True(t, tail.extend(0, 10), "an append at the cut")
	tail.reset(MaxBytesLimit - 10)
	require.True(t, tail.extend(MaxBytesLimit-10, MaxBytesLimit))
	require.True(t, tail.holds(MaxBytesLimit-10, MaxBytesLimit), "positions up to the limit fit the word")
}

// TestVerifiedTail reopens a segment and reads its last batch: the batch
// joins the verified tail, and no chunk of marks is made for it. A damaged
// batch below the tail still fails; once read intact it joins too. Appends
// extend the tail, Truncate cuts it, and what is appended after the cut is
// in it again.
func TestVerifiedTail(t *testing.T) {
	fx, _ := memFixture(t)
	cfg := Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 300}
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(8, 8)), 30, 5, 100)
	require.NoError(t, s.Close())

	s, err = Open(fx.fsys, fx.dir, 0, cfg, true)
	require.NoError(t, err)
	defer s.Close()
	var pos []int64
	var p int64
	for _, b := range written {
		pos = append(pos, p)
		p += int64(len(b.bytes))
	}
	size := s.Size()
	last := len(written) - 1
	_, err = s.Read(nil, written[last].recs[0].Offset, 1)
	require.NoError(t, err)
	require.True(t, s.tail.holds(pos[last], size))
	require.Nil(t, s.marks.dir.Load(), "no marks for a read at the end")

	end28 := pos[28] + int64(len(written[28].bytes))
	s.data[end28-1] ^= 0xff
	_, err = s.Read(nil, written[28].recs[0].Offset, 1)
	require.ErrorIs(t, err, ErrCorrupt, "the tail vouches for its own batches only")
	s.data[end28-1] ^= 0xff
	_, err = s.Read(nil, written[28].recs[0].Offset, 1)
	require.NoError(t, err)
	require.True(t, s.tail.holds(pos[28], size))

	recs := makeRecords(s.NextOffset(), 3, 10, 1)
	require.NoError(t, s.Append(encode(t, recs)))
	require.True(t, s.tail.holds(pos[28], s.Size()), "an append extends it")
	require.Nil(t, s.marks.dir.Load(), "and marks nothing")

	require.NoError(t, s.truncate(written[20].recs[0].Offset))
	require.False(t, s.tail.holds(pos[20], pos[20]+1), "Truncate cuts it")
	recs = makeRecords(written[20].recs[0].Offset, 3, 10, 1)
	require.NoError(t, s.Append(encode(t, recs)))
	require.True(t, s.tail.holds(pos[20], s.Size()))
	requireRecords(t, append(written[:20:20], writtenBatch{encode(t, recs), recs}), 0, readAll(t, s, 0, 1<<20))
}
