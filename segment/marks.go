package segment

import "sync/atomic"

// The granularity of batchMarks: one bit per 32-byte block of the file. No
// two batches start in one block, since a batch takes at least 61 bytes (its
// header), so a block's bit stands for the batch that starts in it.
const (
	markShift  = 5
	chunkShift = 20 // a chunk of marks covers 1 MiB of the file
	chunkWords = 1 << (chunkShift - markShift - 6)
)

// batchMarks remembers which batches past a segment's verified prefix have
// had their CRC checked, so that random reads of a segment reopened after a
// restart pay the CRC of a batch once, not at every lookup. The verified
// prefix grows only from the start of the file, which a reader keeping up
// with the log does, but random lookups do not.
//
// Marks are kept in chunks of 4 KiB, each covering 1 MiB of the file,
// allocated when a batch in that MiB is first checked: a segment nobody
// reads at random costs nothing. Readers set and test marks concurrently,
// without a lock; reset needs the segment to itself (Truncate, Recover).
type batchMarks struct {
	chunks atomic.Pointer[[]atomic.Pointer[[chunkWords]atomic.Uint64]]
}

// has reports whether the batch starting at pos was marked.
func (m *batchMarks) has(pos int64) bool {
	chunks := m.chunks.Load()
	if chunks == nil {
		return false
	}
	i := pos >> chunkShift
	if i >= int64(len(*chunks)) {
		return false
	}
	c := (*chunks)[i].Load()
	if c == nil {
		return false
	}
	bit := (pos >> markShift) & (1<<(chunkShift-markShift) - 1)
	return c[bit>>6].Load()&(1<<(bit&63)) != 0
}

// set marks the batch starting at pos, in a file mapped over size bytes.
func (m *batchMarks) set(pos, size int64) {
	chunks := m.chunks.Load()
	if chunks == nil {
		fresh := make([]atomic.Pointer[[chunkWords]atomic.Uint64], size>>chunkShift+1)
		if !m.chunks.CompareAndSwap(nil, &fresh) {
			chunks = m.chunks.Load()
		} else {
			chunks = &fresh
		}
	}
	i := pos >> chunkShift
	if i >= int64(len(*chunks)) {
		return // past the mapping: cannot happen, and a missing mark is harmless
	}
	c := (*chunks)[i].Load()
	if c == nil {
		fresh := new([chunkWords]atomic.Uint64)
		if !(*chunks)[i].CompareAndSwap(nil, fresh) {
			c = (*chunks)[i].Load()
		} else {
			c = fresh
		}
	}
	bit := (pos >> markShift) & (1<<(chunkShift-markShift) - 1)
	c[bit>>6].Or(1 << (bit & 63))
}

// reset forgets every mark.
func (m *batchMarks) reset() { m.chunks.Store(nil) }
