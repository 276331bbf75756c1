package segment

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChunkTableCost: the first chunk of a table costs the chunk, one page
// and the directory, wherever it lies and however large the mapping; a
// second chunk in the page costs the chunk alone, and one in another page
// a page more. Positions past the mapping get no chunk.
func TestChunkTableCost(t *testing.T) {
	type chunk = [16]atomic.Uint64
	const (
		chunkBytes = 16 * 8
		pageBytes  = 8 * chunkPageLen
		dirBytes   = 8 * chunkDirLen
	)
	for _, size := range []int64{2 << chunkShift, 1 << 30, MaxBytesLimit} {
		var tb chunkTable[chunk]
		pos := size - 1
		c, cost := tb.make(pos, size)
		require.NotNil(t, c)
		require.Equal(t, int64(chunkBytes+pageBytes+dirBytes), cost, "mapping of %d", size)
		require.Same(t, c, tb.get(pos))
		again, cost := tb.make(pos, size)
		require.Same(t, c, again)
		require.Zero(t, cost)
		if pos >= 1<<chunkShift {
			_, cost = tb.make(pos-1<<chunkShift, size)
			want := int64(chunkBytes)
			if pos>>(chunkShift+chunkPageShift) != (pos-1<<chunkShift)>>(chunkShift+chunkPageShift) {
				want += pageBytes
			}
			require.Equal(t, want, cost)
		}
		none, cost := tb.make(size, size)
		require.Nil(t, none, "past the mapping")
		require.Zero(t, cost)
		require.Nil(t, tb.get(size+1<<chunkShift))
		require.Nil(t, tb.get(-1))
		tb.reset()
		require.Nil(t, tb.get(pos))
	}
}
