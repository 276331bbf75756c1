package segment

import "sync/atomic"

// The granularity of batchMarks: one bit per 16-byte block of the file. No
// two batches start in one block, since a batch takes at least 61 bytes (its
// header) and a legacy message (magic 0) at least 26, so a block's bit
// stands for the batch that starts in it.
const (
	markShift  = 4
	chunkWords = 1 << (chunkShift - markShift - 6)
)

// batchMarks remembers which batches past a segment's verified prefix have
// had their CRC checked, so that random reads of a segment reopened after a
// restart pay the CRC of a batch once, not at every lookup. The verified
// prefix grows only from the start of the file, which a reader keeping up
// with the log does, but random lookups do not.
//
// Marks are kept in chunks of 8 KiB, each covering 1 MiB of the file,
// allocated when a batch in that MiB is first checked: a segment nobody
// reads at random costs nothing. Readers set and test marks concurrently,
// without a lock; reset needs the segment to itself (truncate, Recover).
type batchMarks struct {
	chunkTable[[chunkWords]atomic.Uint64]
}

// markBit returns the word and bit of pos's block in its chunk.
func markBit(pos int64) (word int, bit uint64) {
	b := (pos >> markShift) & (1<<(chunkShift-markShift) - 1)
	return int(b >> 6), 1 << (b & 63)
}

// has reports whether the batch starting at pos was marked.
func (m *batchMarks) has(pos int64) bool {
	c := m.get(pos)
	if c == nil {
		return false
	}
	w, bit := markBit(pos)
	return c[w].Load()&bit != 0
}

// set marks the batch starting at pos, in a file mapped over size bytes.
func (m *batchMarks) set(pos, size int64) {
	c, _ := m.make(pos, size)
	if c == nil {
		return // past the mapping: cannot happen, and a missing mark is harmless
	}
	w, bit := markBit(pos)
	c[w].Or(bit)
}
