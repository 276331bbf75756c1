package partition

import (
	"fmt"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// skipTo returns an iterator over the records of batch (whose header is h,
// and which cur returned last) from the first with an offset of at least
// offset on, as a lookup by offset wants them. The records before that one
// are stepped over by their length prefixes, without being decoded: the
// batch's CRC, checked by the segment, vouches for their bytes. The
// iterator then checks the records it reads, and the batch's end, as one
// from the first record would (log.NewRecordIterAt).
func skipTo(h log.BatchHeader, batch []byte, offset int64, cur *segment.Cursor) (log.RecordIter, error) {
	if c := h.Compression(); c != log.None {
		return log.RecordIter{}, fmt.Errorf("%w: batch compressed with %s", log.ErrUnsupportedCompression, c)
	}
	pos, read, prev := log.BatchHeaderSize, int32(0), int64(-1)
	want := offset - h.BaseOffset
	if int64(h.NumRecords) == int64(h.LastOffsetDelta)+1 {
		// Dense: the record at delta d is the d-th; no need to look at
		// the deltas. The segment may know where a record shortly before
		// it starts (large batches), and fetches the lines up to it.
		if want < int64(h.NumRecords) {
			if at, j := cur.RecordStart(batch, h, int(want)); j > 0 {
				pos, read, prev = at, int32(j), int64(j-1)
			}
		}
		for ; int64(read) < want && read < h.NumRecords; read++ {
			_, size, err := recordAt(batch, pos)
			if err != nil {
				return log.RecordIter{}, err
			}
			pos += size
			prev = int64(read)
		}
		return log.NewRecordIterAt(batch, h, pos, read, prev)
	}
	for ; read < h.NumRecords; read++ {
		body, size, err := recordAt(batch, pos)
		if err != nil {
			return log.RecordIter{}, err
		}
		delta, err := offsetDelta(body)
		if err != nil {
			return log.RecordIter{}, err
		}
		if delta >= want {
			break
		}
		if delta <= prev {
			return log.RecordIter{}, fmt.Errorf("%w: offset delta %d after %d", log.ErrCorrupt, delta, prev)
		}
		prev = delta
		pos += size
	}
	return log.NewRecordIterAt(batch, h, pos, read, prev)
}

// recordAt returns the body of the record at batch[pos:] (the bytes after
// its length prefix) and its size, length prefix included.
func recordAt(batch []byte, pos int) (body []byte, size int, err error) {
	n, length, err := log.RecordLength(batch[pos:])
	if err != nil {
		return nil, 0, err
	}
	return batch[pos+n : pos+n+length], n + length, nil
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
