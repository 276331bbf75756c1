package log

// BatchIter walks the entries (batches, or legacy messages) of bytes that
// hold them back to back, decoding each header once: a scan reads the
// header with Header and the whole entry with Batch, and hands both down
// rather than parsing the header again.
//
//	for it := log.NewBatchIter(b); it.Next(); {
//		h, batch := it.Header(), it.Batch()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
//
// Next checks each header as [ReadHeader] does and that the whole entry is
// there ([ErrIncomplete] otherwise), not its CRC.
type BatchIter struct {
	b   []byte
	pos int // where the entry Next read starts
	end int // where it ends: the next one starts
	h   BatchHeader
	err error
}

// NewBatchIter returns an iterator over the entries of b.
func NewBatchIter(b []byte) BatchIter { return BatchIter{b: b} }

// Next reads the next entry's header and reports whether there was one;
// false at the end of the bytes or at a header that is not valid, which
// Err then reports.
func (it *BatchIter) Next() bool {
	if it.err != nil || it.end >= len(it.b) {
		return false
	}
	it.pos = it.end
	h, err := readWhole(it.b[it.pos:])
	if err != nil {
		it.err = err
		return false
	}
	it.h, it.end = h, it.pos+h.Size()
	return true
}

// Header returns the header of the entry Next read.
func (it *BatchIter) Header() BatchHeader { return it.h }

// Batch returns the whole entry Next read, header included, aliasing the
// bytes.
func (it *BatchIter) Batch() []byte { return it.b[it.pos:it.end:it.end] }

// Pos returns where the entry Next read starts in the bytes.
func (it *BatchIter) Pos() int { return it.pos }

// Err returns the error that ended the iteration early, nil at the end of
// the bytes.
func (it *BatchIter) Err() error { return it.err }
