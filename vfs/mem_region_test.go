package vfs

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// heapInUse returns the bytes of the Go heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestMemLargeFilesCostWhatIsWritten: a mapping that reserves 1 GiB for a
// log and an index preallocated to 10 MiB, as a segment makes them, take
// no Go heap: their memory is given out page by page as it is written.
func TestMemLargeFilesCostWhatIsWritten(t *testing.T) {
	if mem, _, err := mapRegion(regionMin); err != nil {
		t.Skip("no regions here: a Mem's files are on the Go heap")
	} else {
		unmapRegion(mem)
	}
	m := NewMem()
	before := heapInUse()

	log, err := m.OpenFile("/0.log", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	logMap, err := log.Map(1 << 30)
	require.NoError(t, err)
	require.NoError(t, log.AllocateRange(0, 64<<10))
	require.NoError(t, log.WriteMap(logMap, 0, []byte("batch")))

	idx, err := m.OpenFile("/0.index", os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, idx.Truncate(10<<20))
	idxMap, err := idx.Map(10 << 20)
	require.NoError(t, err)
	require.NoError(t, idx.WriteMap(idxMap, 0, []byte("entry")))

	grown := int64(heapInUse()) - int64(before)
	require.Less(t, grown, int64(1<<20), "a 1 GiB mapping and a 10 MiB index took %d bytes of heap", grown)

	// A large file's contents still behave as bytes: what a shrink cut
	// reads as zeros when the file grows again, and what stays is kept
	// when the last mapping goes.
	require.NoError(t, idx.WriteMap(idxMap, 5<<20, []byte("far")))
	require.NoError(t, idx.Truncate(8))
	require.NoError(t, idx.Truncate(10<<20))
	require.Equal(t, make([]byte, 3), idxMap[5<<20:5<<20+3])
	require.Equal(t, "entry", string(idxMap[:5]))
	require.NoError(t, idx.Truncate(8))
	require.NoError(t, idx.Unmap(idxMap))
	require.NoError(t, idx.Truncate(16))
	require.NoError(t, log.Unmap(logMap))
	require.NoError(t, log.Close())
	require.NoError(t, idx.Close())
	require.Equal(t, "entry\x00\x00\x00"+string(make([]byte, 8)), contents(t, m, "/0.index"))
	require.Equal(t, "batch", contents(t, m, "/0.log")[:5])
}

// TestMemRegionsAreReusedClean: the memory of a large mapping that goes
// back to the pool holds zeros when the next file gets it, where the old
// file's bytes were, near the start (cleared) and far in (given back to
// the OS).
func TestMemRegionsAreReusedClean(t *testing.T) {
	m := NewMem()
	for i := range 3 {
		f, err := m.OpenFile("/f"+string(rune('a'+i)), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err)
		b, err := f.Map(4 << 20)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(4<<20))
		require.Equal(t, make([]byte, 4<<20), b, "file %d starts as zeros", i)
		_, err = f.WriteAt([]byte("near"), 100)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("far"), 3<<20)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(8))
		require.NoError(t, f.Unmap(b))
		require.NoError(t, f.Close())
		require.Equal(t, "\x00\x00\x00\x00\x00\x00\x00\x00", contents(t, m, "/f"+string(rune('a'+i))))
	}
}
