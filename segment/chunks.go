package segment

import "sync/atomic"

// chunkShift sets the span of file a chunk of a chunkTable covers: 1 MiB.
const chunkShift = 20

// chunkTable is a lock-free table of per-MiB chunks of C for a file mapped
// over some size, each allocated when first asked for with make: memory is
// spent only on the MiBs that use it. The marks of CRC-checked batches and
// the remembered record positions are such tables. Any number of goroutines
// may get and make chunks at once; reset needs the segment to itself
// (truncate, Recover).
type chunkTable[C any] struct {
	chunks atomic.Pointer[[]atomic.Pointer[C]]
}

// get returns the chunk covering pos, or nil if there is none yet.
func (t *chunkTable[C]) get(pos int64) *C {
	chunks := t.chunks.Load()
	if chunks == nil || pos>>chunkShift >= int64(len(*chunks)) {
		return nil
	}
	return (*chunks)[pos>>chunkShift].Load()
}

// make returns the chunk covering pos in a file mapped over size bytes,
// allocating it (and the table) if need be, and whether this call allocated
// the chunk; nil past the mapping.
func (t *chunkTable[C]) make(pos, size int64) (c *C, made bool) {
	chunks := t.chunks.Load()
	if chunks == nil {
		fresh := make([]atomic.Pointer[C], size>>chunkShift+1)
		t.chunks.CompareAndSwap(nil, &fresh)
		chunks = t.chunks.Load()
	}
	i := pos >> chunkShift
	if i >= int64(len(*chunks)) {
		return nil, false
	}
	if c := (*chunks)[i].Load(); c != nil {
		return c, false
	}
	fresh := new(C)
	if (*chunks)[i].CompareAndSwap(nil, fresh) {
		return fresh, true
	}
	return (*chunks)[i].Load(), false
}

// reset forgets every chunk.
func (t *chunkTable[C]) reset() { t.chunks.Store(nil) }
