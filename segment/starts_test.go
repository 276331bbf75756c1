package segment

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// TestRecordStart checks the record positions a cursor gives lookups into
// large batches against a walk of the records' length prefixes: for every
// record k, the record j it names is the last multiple of recordStride at or
// before k, and its position is where record j starts. Small batches (in
// records or bytes) and damaged ones are not remembered.
func TestRecordStart(t *testing.T) {
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: testMaxBytes})
	require.NoError(t, err)
	defer s.Close()
	sizes := []int{100, 2*recordStride - 1, 2 * recordStride, 37, startsInline * recordStride, startsInline*recordStride + 1, 500, 40}
	values := []int{300, 300, 300, 300, 50, 50, 50, 50} // the last batch is under 4 KiB
	var first int64
	for i, n := range sizes {
		require.NoError(t, s.Append(encode(t, makeRecords(first, n, values[i], 1))))
		first += int64(n)
	}

	first = 0
	for _, n := range sizes {
		c, err := s.CursorAt(first)
		require.NoError(t, err)
		h, batch, err := c.Next()
		require.NoError(t, err)
		// Where each record starts, by walking the length prefixes.
		var starts []int
		for p := log.BatchHeaderSize; p < len(batch); {
			starts = append(starts, p)
			length, m, err := log.ReadVarint(batch[p:])
			require.NoError(t, err)
			p += m + int(length)
		}
		require.Len(t, starts, n)
		for k := range n {
			at, j := c.RecordStart(batch, &h, k)
			wantJ := 0
			if n >= 2*recordStride && len(batch) >= startsMinBatch {
				wantJ = k / recordStride * recordStride
			}
			require.Equal(t, wantJ, j, "batch of %d, record %d", n, k)
			require.Equal(t, starts[j], at, "batch of %d, record %d", n, k)
		}
		first += int64(n)
	}

	// A batch whose length prefixes do not add up is not remembered.
	c, err := s.CursorAt(0)
	require.NoError(t, err)
	_, batch, err := c.Next()
	require.NoError(t, err)
	require.NotNil(t, recordStarts(0, batch, 100))
	require.Nil(t, recordStarts(0, batch, 99), "one record left over")
	require.Nil(t, recordStarts(0, batch[:len(batch)-1], 100), "the last record runs past the end")

	// Truncate forgets what was remembered.
	require.NotNil(t, s.starts.get(0))
	require.NoError(t, s.truncate(100))
	require.Nil(t, s.starts.get(0))
}

// TestStartsBudget fills a table up to its budget: past it nothing more is
// remembered, and what was stays.
func TestStartsBudget(t *testing.T) {
	var tb startsTable
	const size = 64 << 20 // budget 1 MiB
	stored := 0
	for pos := int64(0); pos < size; pos += startsMinBatch {
		tb.put(&starts{pos: pos, n: 1000, more: make([]uint32, 1000-startsInline)}, size) // 4 KiB
		if tb.get(pos) != nil {
			stored++
		}
	}
	require.Greater(t, stored, 100)
	require.Less(t, stored, 300, "about 1 MiB / 4 KiB per entry")
	require.LessOrEqual(t, tb.used.Load(), int64(size>>startsBudgetShift))
	require.NotNil(t, tb.get(0), "the first entries stay")
	require.Nil(t, tb.get(startsMinBatch+1), "only the batch's own position finds it")
	tb.reset()
	require.Nil(t, tb.get(0))
	require.Zero(t, tb.used.Load())
}

// TestPrefetchIsOnlyAHint calls prefetch with the guesses a damaged or
// compacted index could give it, on both file systems (on the OS one the
// file ends where the log does): none may panic or fault. Lookups through
// locate, which prefetches (and fetches the lines of small batches by their
// expected stride), still find every record of every batch, with and
// without positions remembered.
func TestPrefetchIsOnlyAHint(t *testing.T) {
	eachFS(t, func(t *testing.T, fx fixture) {
		s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: testMaxBytes, WriteCalls: true})
		require.NoError(t, err)
		defer s.Close()
		var first int64
		for range 5 {
			require.NoError(t, s.Append(encode(t, makeRecords(first, 100, 100, 1))))
			first += 100
		}
		// Then one-record batches: of one size (whose headers locate
		// fetches by stride), then of varied sizes.
		for i := range 400 {
			size := 100
			if i >= 200 {
				size = 50 + i*7919%101
			}
			require.NoError(t, s.Append(encode(t, makeRecords(first, 1, size, 1))))
			first++
		}
		end := s.Size()
		for _, c := range []struct{ pos, size, k, n int64 }{
			{0, end, 50, 100},
			{0, 1 << 40, 99, 100},       // size past the end
			{end - 1, 1 << 20, 50, 100}, // a batch that would run past the end
			{end, 4096, 50, 100},        // at the end
			{-1, 4096, 50, 100},
			{0, end, -1, 100},
			{0, end, 50, 0},
			{0, end, 1 << 40, 1<<40 + 1},
			{0, 4096, 50, 100},
		} {
			require.NotPanics(t, func() { _ = s.prefetch(c.pos, c.size, end, c.k, c.n) }, "%+v", c)
		}
		for round := range 2 { // then again with the positions remembered
			for off := range first {
				c, err := s.CursorAt(off)
				require.NoError(t, err)
				h, batch, err := c.Next()
				require.NoError(t, err)
				require.LessOrEqual(t, h.BaseOffset, off, "round %d", round)
				require.GreaterOrEqual(t, h.BaseOffset+int64(h.LastOffsetDelta), off, "round %d", round)
				at, j := c.RecordStart(batch, &h, int(off-h.BaseOffset))
				require.LessOrEqual(t, j, int(off-h.BaseOffset))
				require.Less(t, at, len(batch))
			}
		}
	})
}

// TestStartsFirstBatch: the first batch a segment learns the record
// positions of is held in the table itself, so that learning it allocates
// nothing; later batches go to the chunks. A batch whose prefixes do not
// add up leaves the first place free, and reset frees it.
func TestStartsFirstBatch(t *testing.T) {
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, Config{MaxBytes: testMaxBytes})
	require.NoError(t, err)
	defer s.Close()
	sizes := []int{100, 100, 500}
	var first int64
	var pos []int64
	for _, n := range sizes {
		pos = append(pos, s.Size())
		require.NoError(t, s.Append(encode(t, makeRecords(first, n, 300, 1))))
		first += int64(n)
	}
	at := func(i int) (Cursor, log.BatchHeader, []byte) {
		c, err := s.CursorAt(int64(i * 100))
		require.NoError(t, err)
		h, batch, err := c.Next()
		require.NoError(t, err)
		return c, h, batch
	}
	c1, h1, b1 := at(1)
	require.Zero(t, testing.AllocsPerRun(20, func() {
		s.starts.reset()
		if _, j := c1.RecordStart(b1, &h1, 50); j != 48 {
			t.Fatal(j)
		}
	}), "learning the first batch")
	require.Same(t, &s.starts.first, s.starts.get(pos[1]))
	require.Nil(t, s.starts.slots.dir.Load(), "no chunk for it")
	require.Zero(t, s.starts.used.Load())

	c0, h0, b0 := at(0)
	_, j := c0.RecordStart(b0, &h0, 50)
	require.Equal(t, 48, j)
	require.NotNil(t, s.starts.get(pos[0]))
	require.NotSame(t, &s.starts.first, s.starts.get(pos[0]), "the second in a chunk")
	require.Same(t, &s.starts.first, s.starts.get(pos[1]))

	// The first place, taken by a large batch: its positions past the
	// inline ones count against the budget.
	s.starts.reset()
	c2, h2, b2 := at(2)
	require.Nil(t, s.starts.learn(pos[2], b2[:len(b2)-1], 500, int64(len(s.data))), "prefixes that do not add up")
	require.Nil(t, s.starts.get(pos[2]))
	_, j = c2.RecordStart(b2, &h2, 400)
	require.Equal(t, 400, j)
	require.Same(t, &s.starts.first, s.starts.get(pos[2]))
	require.Equal(t, int64(4*len(s.starts.first.more)), s.starts.used.Load())
	s.starts.reset()
	require.Nil(t, s.starts.get(pos[2]))
	require.Zero(t, s.starts.used.Load())
}

// refStarts is fillStarts by log.RecordLength alone: the positions of
// records 0, recordStride, 2*recordStride… of the n records of batch, or
// false if their length prefixes do not read or add up to its size.
func refStarts(batch []byte, n int) ([]uint32, bool) {
	var out []uint32
	p := log.BatchHeaderSize
	for i := range n {
		if i%recordStride == 0 {
			out = append(out, uint32(p))
		}
		if p > len(batch) {
			return nil, false
		}
		prefix, length, err := log.RecordLength(batch[p:])
		if err != nil {
			return nil, false
		}
		p += prefix + length
	}
	return out, p == len(batch)
}

// TestFillStartsPrefixes checks fillStarts, which steps over one- and
// two-byte length prefixes with log.SkipRecord, against refStarts on
// batches whose records take prefixes of one, two and three bytes: whole,
// cut short (at the end, and inside a record that others follow), with
// one record's length made negative (its magnitude kept, so that the
// lengths still add up), and with bytes of the record section overwritten
// at random. The two agree on every batch, and fillStarts never panics.
func TestFillStartsPrefixes(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 3))
	values := []int{5, 40, 100, 300, 9000} // prefixes of 1, 1, 2, 2 and 3 bytes
	for round := range 400 {
		n := 2*recordStride + r.IntN(200)
		recs := makeRecords(0, n, 0, 1)
		for i := range recs {
			recs[i].Value = make([]byte, values[r.IntN(len(values))])
		}
		batch := encode(t, recs)
		if round%4 == 2 {
			// One record's length made negative (its zigzag's low bit
			// set), its magnitude kept: the prefixes still add up.
			var at []int
			for p := log.BatchHeaderSize; p < len(batch); {
				at = append(at, p)
				prefix, length, err := log.RecordLength(batch[p:])
				require.NoError(t, err)
				p += prefix + length
			}
			batch[at[r.IntN(len(at))]] ^= 1
		}
		if round%4 == 3 {
			// Cut inside a record that is not the last: its end lies past
			// the bytes, and records follow it.
			var at []int
			for p := log.BatchHeaderSize; p < len(batch); {
				at = append(at, p)
				prefix, length, err := log.RecordLength(batch[p:])
				require.NoError(t, err)
				p += prefix + length
			}
			batch = batch[:at[len(at)-3]+3]
		}
		if round%4 == 1 {
			for range 1 + r.IntN(4) {
				at := log.BatchHeaderSize + r.IntN(len(batch)-log.BatchHeaderSize)
				batch[at] = byte(r.UintN(256))
			}
		}
		if round%7 == 3 {
			batch = batch[:len(batch)-1-r.IntN(20)]
		}
		want, wantOK := refStarts(batch, n)
		var e starts
		ok := fillStarts(&e, 0, batch, n)
		require.Equal(t, wantOK, ok, "round %d", round)
		if !ok {
			continue
		}
		require.Equal(t, int32(len(want)), e.n)
		for i, w := range want {
			got, present := e.at(i)
			require.True(t, present)
			require.Equal(t, w, got, "round %d, position %d", round, i)
		}
	}
}
