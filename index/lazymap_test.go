package index

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/vfs"
)

// writeIndexes writes an offset and a time index of n entries each (offset
// 10+2i at position 100i, timestamp 1000+i) for the segment at base 10, and
// closes them.
func writeIndexes(t *testing.T, fsys vfs.FS, n int) {
	t.Helper()
	o, err := OpenOffset(fsys, "10.index", 10, 0, true)
	require.NoError(t, err)
	x, err := OpenTime(fsys, "10.timeindex", 10, 0, true)
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, o.Append(int64(10+2*i), int32(100*i)))
		require.NoError(t, x.MaybeAppend(int64(1000+i), int64(10+2*i), false))
	}
	require.NoError(t, o.Close())
	require.NoError(t, x.Close())
}

// TestMappedWhenFirstNeeded: a time index and an offset index, writable or
// not, map their files only when an entry between the first and the last
// is first read, or an entry is appended; their ends read without a
// mapping, and so do lookups of an offset that the first or the last entry
// answers, so one that is never searched is never mapped.
func TestMappedWhenFirstNeeded(t *testing.T) {
	for _, n := range []int{1, 2, 600} { // 600 time entries span two pages
		m := vfs.NewMem()
		writeIndexes(t, m, n)
		last := n - 1
		for _, writable := range []bool{false, true} {
			maps := m.Count(vfs.OpMap)
			x, err := OpenTime(m, "10.timeindex", 10, 0, writable)
			require.NoError(t, err)
			ts, off := x.LastEntry()
			require.Equal(t, [2]int64{int64(1000 + last), int64(10 + 2*last)}, [2]int64{ts, off})
			ts, off = x.Entry(0)
			require.Equal(t, [2]int64{1000, 10}, [2]int64{ts, off})
			require.Equal(t, maps, m.Count(vfs.OpMap), "n=%d writable=%v: mapped before a search", n, writable)
			ts, off = x.Lookup(int64(1000 + n/2))
			require.Equal(t, [2]int64{int64(1000 + n/2), int64(10 + 2*(n/2))}, [2]int64{ts, off})
			require.Equal(t, maps+1, m.Count(vfs.OpMap), "n=%d writable=%v", n, writable)
			require.NoError(t, x.Close())

			maps = m.Count(vfs.OpMap)
			o, err := OpenOffset(m, "10.index", 10, 0, writable)
			require.NoError(t, err)
			off, pos := o.Entry(last)
			require.Equal(t, [2]int64{int64(10 + 2*last), int64(100 * last)}, [2]int64{off, int64(pos)})
			for _, target := range []int64{5, 10 + 2*int64(last), 10 + 2*int64(last) + 1, 1 << 40} {
				slot, _ := o.Floor(target)
				want := last
				if target < 10 {
					want = -1
				}
				require.Equal(t, want, slot, "n=%d writable=%v: Floor(%d)", n, writable, target)
			}
			off, pos = o.Lookup(1 << 40)
			require.Equal(t, [2]int64{int64(10 + 2*last), int64(100 * last)}, [2]int64{off, int64(pos)})
			require.Equal(t, maps, m.Count(vfs.OpMap), "n=%d writable=%v: offset index mapped for its ends", n, writable)
			if n > 2 {
				off, pos = o.Lookup(int64(10 + 2*(n/2)))
				require.Equal(t, [2]int64{int64(10 + 2*(n/2)), int64(100 * (n / 2))}, [2]int64{off, int64(pos)})
				require.Equal(t, maps+1, m.Count(vfs.OpMap), "n=%d writable=%v", n, writable)
			}
			require.NoError(t, o.Close())
		}

		// Appending maps a writable offset index.
		maps := m.Count(vfs.OpMap)
		o, err := OpenOffset(m, "10.index", 10, 0, true)
		require.NoError(t, err)
		require.NoError(t, o.Append(int64(10+2*n), int32(100*n)))
		require.Equal(t, maps+1, m.Count(vfs.OpMap))
		require.NoError(t, o.Close())
		o, err = OpenOffset(m, "10.index", 10, 0, false)
		require.NoError(t, err)
		require.Equal(t, n+1, o.Entries())
		require.NoError(t, o.Check())
		require.NoError(t, o.Close())

		// Appending maps a writable time index.
		maps = m.Count(vfs.OpMap)
		x, err := OpenTime(m, "10.timeindex", 10, 0, true)
		require.NoError(t, err)
		require.NoError(t, x.MaybeAppend(int64(1000+n), int64(10+2*n), false))
		require.Equal(t, maps+1, m.Count(vfs.OpMap))
		require.NoError(t, x.Close())
		x = openTime(t, m, "10.timeindex", 10, 0, false)
		require.Equal(t, n+1, x.Entries())
		require.NoError(t, x.Check())
		require.NoError(t, x.Close())
	}
}

// TestLazyTruncateTo: TruncateTo of a time index not mapped yet cuts at
// the same entry as a mapped one, and so does it when the mapping fails
// (the entries read with pread).
func TestLazyTruncateTo(t *testing.T) {
	for _, failMap := range []bool{false, true} {
		m := vfs.NewMem()
		writeIndexes(t, m, 50)
		if failMap {
			m.SetInjector(vfs.FailOnce(vfs.OpMap, ".timeindex"))
		}
		x, err := OpenTime(m, "10.timeindex", 10, 0, true)
		require.NoError(t, err)
		x.TruncateTo(10 + 2*20) // drops entries 20 on
		require.Equal(t, 20, x.Entries(), "failMap=%v", failMap)
		ts, off := x.LastEntry()
		require.Equal(t, [2]int64{1019, 48}, [2]int64{ts, off})
		require.NoError(t, x.Close())
		x = openTime(t, m, "10.timeindex", 10, 0, false)
		require.Equal(t, 20, x.Entries())
		require.NoError(t, x.Close())
	}
}

// TestLazyMapConcurrent: readers that search an index not mapped yet at
// the same time all map it once and find the same entries (run with
// -race).
func TestLazyMapConcurrent(t *testing.T) {
	m := vfs.NewMem()
	writeIndexes(t, m, 300)
	for range 20 {
		maps := m.Count(vfs.OpMap)
		x := openTime(t, m, "10.timeindex", 10, 0, false)
		o, err := OpenOffset(m, "10.index", 10, 0, false)
		require.NoError(t, err)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := g; i < 300; i += 4 {
					if ts, off := x.Lookup(int64(1000 + i)); ts != int64(1000+i) || off != int64(10+2*i) {
						t.Errorf("time lookup %d: %d %d", i, ts, off)
					}
					if off, pos := o.Lookup(int64(11 + 2*i)); off != int64(10+2*i) || pos != int32(100*i) {
						t.Errorf("offset lookup %d: %d %d", i, off, pos)
					}
				}
			})
		}
		wg.Wait()
		require.Equal(t, maps+2, m.Count(vfs.OpMap))
		require.NoError(t, x.Close())
		require.NoError(t, o.Close())
	}
}
