package segment

import (
	"sync/atomic"
	"unsafe"
)

// chunkShift sets the span of file a chunk of a chunkTable covers: 1 MiB.
const chunkShift = 20

// A chunkTable finds its chunks in two levels: a directory of
// chunkDirLen pages, each page holding the pointers to the chunks of
// 1<<chunkPageShift MiB (64 MiB, 512 bytes of pointers), so that the
// table spans MaxBytesLimit.
const (
	chunkPageShift = 6
	chunkPageLen   = 1 << chunkPageShift
	chunkDirLen    = MaxBytesLimit>>(chunkShift+chunkPageShift) + 1
)

// chunkTable is a lock-free table of per-MiB chunks of C for a file mapped
// over some size, each allocated when first asked for with make: memory is
// spent only on the MiBs that use it, and on the directory (256 bytes) and
// the page (512 bytes) that lead to them, never in proportion to the
// mapping's size. The marks of CRC-checked batches and the remembered
// record positions are such tables. Any number of goroutines may get and
// make chunks at once; reset needs the segment to itself (truncate,
// Recover).
type chunkTable[C any] struct {
	dir atomic.Pointer[[chunkDirLen]atomic.Pointer[chunkPage[C]]]
}

// chunkPage is one page of a chunkTable: the chunks of 64 MiB.
type chunkPage[C any] [chunkPageLen]atomic.Pointer[C]

// chunkAt returns where the chunk covering pos sits: its page in the
// directory and its slot in the page.
func chunkAt(pos int64) (page, slot int) {
	i := pos >> chunkShift
	return int(i >> chunkPageShift), int(i & (chunkPageLen - 1))
}

// get returns the chunk covering pos, or nil if there is none yet.
func (t *chunkTable[C]) get(pos int64) *C {
	dir := t.dir.Load()
	if dir == nil || pos < 0 || pos > MaxBytesLimit {
		return nil
	}
	page, slot := chunkAt(pos)
	p := dir[page].Load()
	if p == nil {
		return nil
	}
	return p[slot].Load()
}

// make returns the chunk covering pos in a file mapped over size bytes,
// allocating it (and the page and directory leading to it) if need be, and
// the bytes this call allocated; nil past the mapping. Of goroutines that
// allocate the same chunk at once, one's is kept, and the others' calls
// report no bytes for it.
func (t *chunkTable[C]) make(pos, size int64) (c *C, cost int64) {
	if pos < 0 || pos >= size || pos > MaxBytesLimit {
		return nil, 0
	}
	dir := t.dir.Load()
	if dir == nil {
		fresh := new([chunkDirLen]atomic.Pointer[chunkPage[C]])
		if t.dir.CompareAndSwap(nil, fresh) {
			cost += int64(unsafe.Sizeof(*fresh))
		}
		dir = t.dir.Load()
	}
	page, slot := chunkAt(pos)
	p := dir[page].Load()
	if p == nil {
		fresh := new(chunkPage[C])
		if dir[page].CompareAndSwap(nil, fresh) {
			cost += int64(unsafe.Sizeof(*fresh))
		}
		p = dir[page].Load()
	}
	if c := p[slot].Load(); c != nil {
		return c, cost
	}
	fresh := new(C)
	if p[slot].CompareAndSwap(nil, fresh) {
		return fresh, cost + int64(unsafe.Sizeof(*fresh))
	}
	return p[slot].Load(), cost
}

// reset forgets every chunk.
func (t *chunkTable[C]) reset() { t.dir.Store(nil) }
