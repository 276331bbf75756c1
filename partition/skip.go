package partition

import (
	"encoding/binary"
	"fmt"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// Byte offsets of the batch header fields a one-record batch rewrites
// (KAFKA.md §1: RecordBatch v2).
const (
	headerLength     = 8  // int32: bytes after this field
	headerNumRecords = 57 // int32: number of records
	lengthOverhead   = 12 // baseOffset and Length, which Length does not count
)

// partBatch reads a batch from a record in its middle, as a lookup by
// offset does. The records before that one are stepped over by their
// length prefixes, without being decoded: the batch's CRC, checked by the
// segment, vouches for their bytes. Each record returned is decoded alone,
// by log's RecordIter with all of its checks, from a copy of the batch
// header rewritten to hold that one record followed by a copy of the record:
// a copy of about the record's size, where decoding the records before it
// would cost far more.
type partBatch struct {
	h      log.BatchHeader
	header []byte // the batch header, in the segment's mapping; nil when none is being read
	rest   []byte // the records not yet read, in the mapping
	left   int32  // how many there are, per the header
	prev   int64  // offset delta of the last record passed, -1 before the first
	buf    []byte // the one-record batch being decoded
}

func (b *partBatch) active() bool { return b.header != nil }

func (b *partBatch) reset() {
	b.header, b.rest, b.left = nil, nil, 0
}

// start positions b at the first record of batch (whose header is h, and
// which cur returned last) with an offset of at least offset, past the batch
// if no record reaches it.
func (b *partBatch) start(h log.BatchHeader, batch []byte, offset int64, cur *segment.Cursor) error {
	if c := h.Compression(); c != log.None {
		return fmt.Errorf("%w: batch compressed with %s", log.ErrUnsupportedCompression, c)
	}
	b.h, b.header, b.rest = h, batch[:log.BatchHeaderSize], batch[log.BatchHeaderSize:]
	b.left, b.prev = h.NumRecords, -1
	want := offset - h.BaseOffset
	if int64(h.NumRecords) == int64(h.LastOffsetDelta)+1 {
		// Dense: the record at delta d is the d-th; no need to look at
		// the deltas. The segment may know where a record shortly before
		// it starts (large batches), and fetches the lines up to it.
		d := int64(0)
		if want < int64(h.NumRecords) {
			if at, j := cur.RecordStart(batch, h, int(want)); j > 0 {
				b.rest, b.left, b.prev, d = batch[at:], h.NumRecords-int32(j), int64(j-1), int64(j)
			}
		}
		for ; d < want && b.left > 0; d++ {
			if _, err := b.skip(); err != nil {
				return err
			}
			b.prev = d
		}
		return nil
	}
	for b.left > 0 {
		body, size, err := b.peek()
		if err != nil {
			return err
		}
		delta, err := offsetDelta(body)
		if err != nil {
			return err
		}
		if delta >= want {
			return nil
		}
		if delta <= b.prev {
			return fmt.Errorf("%w: offset delta %d after %d", log.ErrCorrupt, delta, b.prev)
		}
		b.prev = delta
		b.advance(size)
	}
	return nil
}

// peek returns the next record's body (the bytes after its length prefix)
// and its size, length prefix included.
func (b *partBatch) peek() (body []byte, size int, err error) {
	n, length, err := log.RecordLength(b.rest)
	if err != nil {
		return nil, 0, err
	}
	return b.rest[n : n+length], n + length, nil
}

// advance steps over the next record, of size bytes, and returns them.
func (b *partBatch) advance(size int) []byte {
	rec := b.rest[:size]
	b.rest = b.rest[size:]
	b.left--
	return rec
}

// skip steps over the next record and returns its bytes, length prefix
// included.
func (b *partBatch) skip() ([]byte, error) {
	_, size, err := b.peek()
	if err != nil {
		return nil, err
	}
	return b.advance(size), nil
}

// next decodes the next record into rec, skipping those below want, and
// reports whether there was one; at the end of the batch it checks that the
// records filled it exactly.
func (b *partBatch) next(rec *log.Record, want int64) (bool, error) {
	for b.left > 0 {
		raw, err := b.skip()
		if err != nil {
			return false, err
		}
		b.buf = append(b.buf[:0], b.header...)
		one := b.h
		one.Length, one.NumRecords = int32(log.BatchHeaderSize-lengthOverhead+len(raw)), 1
		binary.BigEndian.PutUint32(b.buf[headerLength:], uint32(one.Length))
		binary.BigEndian.PutUint32(b.buf[headerNumRecords:], 1)
		b.buf = append(b.buf, raw...)
		it, err := log.NewRecordIterHeader(b.buf, one)
		if err != nil {
			return false, err
		}
		if !it.Next(rec) {
			if err := it.Err(); err != nil {
				return false, err
			}
			return false, fmt.Errorf("%w: record missing", log.ErrCorrupt)
		}
		delta := rec.Offset - b.h.BaseOffset
		if delta <= b.prev {
			return false, fmt.Errorf("%w: offset delta %d after %d", log.ErrCorrupt, delta, b.prev)
		}
		b.prev = delta
		if rec.Offset >= want {
			return true, nil
		}
	}
	if len(b.rest) != 0 {
		return false, fmt.Errorf("%w: %d bytes after the last of %d records", log.ErrCorrupt, len(b.rest), b.h.NumRecords)
	}
	return false, nil
}

// offsetDelta reads the offset delta of a record body: after the attributes
// byte and the timestamp delta.
func offsetDelta(body []byte) (int64, error) {
	_, n, err := log.ReadVarlong(body[1:])
	if err != nil {
		return 0, fmt.Errorf("%w: timestamp delta: %w", log.ErrCorrupt, err)
	}
	d, _, err := log.ReadVarint(body[1+n:])
	if err != nil {
		return 0, fmt.Errorf("%w: offset delta: %w", log.ErrCorrupt, err)
	}
	return int64(d), nil
}
