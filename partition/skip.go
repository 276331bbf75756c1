package partition

import (
	"fmt"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// skipTo returns an iterator over the records of batch (whose header is h,
// and which cur returned last) from the first with an offset of at least
// offset on, as a lookup by offset wants them; dec decompresses a
// compressed batch. The records before that one are stepped over by their
// length prefixes, without being decoded (see seekRecord). The iterator then
// checks the records it reads, and the batch's end, as one from the first
// record would (log.Decoder.IterAt).
func skipTo(h log.BatchHeader, batch []byte, offset int64, cur *segment.Cursor, dec *log.Decoder) (log.RecordIter, error) {
	_, pos, read, prev, err := seekRecord(&h, batch, offset, cur, dec)
	if err != nil {
		return log.RecordIter{}, err
	}
	return dec.IterAt(batch, h, pos, read, prev)
}

// seekRecord finds, in the plain form of batch (whose header is h, and
// which cur returned last; dec decompresses a compressed batch), the first
// record with an offset of at least offset: it returns the plain form, the
// record's position in it, the number of records before it and the offset
// delta of the last of those (-1 for none), as log.ReadRecordAt and
// log.Decoder.IterAt take them. The records before it are stepped over by
// their length prefixes, without being decoded: the batch's CRC, checked by
// the segment, vouches for their bytes.
func seekRecord(h *log.BatchHeader, batch []byte, offset int64, cur *segment.Cursor, dec *log.Decoder) (plain []byte, pos int, read int32, prev int64, err error) {
	compressed := h.Compression() != log.None
	plain, ok := log.PlainAsIs(batch, h)
	if !ok {
		if plain, err = dec.PlainOf(batch, h); err != nil {
			return nil, 0, 0, 0, err
		}
	}
	pos, read, prev = log.BatchHeaderSize, int32(0), int64(-1)
	want := offset - h.BaseOffset
	if int64(h.NumRecords) == int64(h.LastOffsetDelta)+1 {
		// Dense: the record at delta d is the d-th; no need to look at
		// the deltas. The segment may know where a record shortly before
		// it starts (large batches, uncompressed: the positions it keeps
		// are in the file), and fetches the lines up to it.
		if want < int64(h.NumRecords) && !compressed {
			if at, j := cur.RecordStart(plain, h, int(want)); j > 0 {
				pos, read, prev = at, int32(j), int64(j-1)
			}
		}
		for ; int64(read) < want && read < h.NumRecords; read++ {
			if q := log.SkipRecord(plain, pos); q > 0 && q <= len(plain) {
				pos = q
			} else {
				_, size, err := recordAt(plain, pos)
				if err != nil {
					return nil, 0, 0, 0, err
				}
				pos += size
			}
			prev = int64(read)
		}
		return plain, pos, read, prev, nil
	}
	for ; read < h.NumRecords; read++ {
		body, size, err := recordAt(plain, pos)
		if err != nil {
			return nil, 0, 0, 0, err
		}
		delta, err := offsetDelta(body)
		if err != nil {
			return nil, 0, 0, 0, err
		}
		if delta >= want {
			break
		}
		if delta <= prev {
			return nil, 0, 0, 0, fmt.Errorf("%w: offset delta %d after %d", log.ErrCorrupt, delta, prev)
		}
		prev = delta
		pos += size
	}
	return plain, pos, read, prev, nil
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
