package segment

import (
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
	sizes := []int{100, 2*recordStride - 1, 2 * recordStride, 37, 40}
	values := []int{300, 300, 300, 300, 50} // the last batch is under 4 KiB
	var first int64
	for i, n := range sizes {
		require.NoError(t, s.Append(encode(t, makeRecords(first, n, values[i], 1))))
		first += int64(n)
	}

	first = 0
	for _, n := range sizes {
		c, err := s.CursorAt(first)
		require.NoError(t, err)
		_, batch, err := c.Next()
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
			at, j := c.RecordStart(batch, k)
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
	require.NotNil(t, recordStarts(batch, 100))
	require.Nil(t, recordStarts(batch, 99), "one record left over")
	require.Nil(t, recordStarts(batch[:len(batch)-1], 100), "the last record runs past the end")

	// Truncate forgets what was remembered.
	require.NotNil(t, s.starts.get(0))
	require.NoError(t, s.Truncate(100))
	require.Nil(t, s.starts.get(0))
}

// TestStartsBudget fills a table up to its budget: past it nothing more is
// remembered, and what was stays.
func TestStartsBudget(t *testing.T) {
	var tb startsTable
	const size = 64 << 20 // budget 1 MiB
	table := make([]uint32, 1000)
	stored := 0
	for pos := int64(0); pos < size; pos += startsMinBatch {
		tb.put(&starts{pos: pos, starts: table}, size)
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
