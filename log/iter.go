package log

import (
	"iter"
	"slices"
	"time"
)

// RecordIter iterates over the records of one uncompressed batch without
// allocating per record. It checks every record as it goes (see [Validate])
// and stops at the first problem, which Err then reports.
//
//	it, err := log.NewRecordIter(batch)
//	...
//	var r log.Record
//	for it.Next(&r) {
//		use(r)
//	}
//	if err := it.Err(); err != nil { ... }
type RecordIter struct {
	b      []byte      // the batch, exactly Size() bytes
	h      BatchHeader // its header
	pos    int         // where the next record starts in b
	n      int32       // records read
	prev   int64       // offset delta of the last record read, -1 before the first
	stored int64       // stored timestamp of the last record read
	err    error
	// The last timestamp converted, and its time.Time: records of a batch
	// often share one, and the conversion is a good part of a record's cost.
	lastTS   int64
	lastTime time.Time
	haveLast bool
}

// NewRecordIter returns an iterator over the records of the batch at the
// start of batch, which may hold more bytes after it. It checks the header as
// [ReadHeader] does, that the whole batch is present ([ErrIncomplete]),
// that it is not a legacy message ([ErrUnsupportedFormat]) and that it is
// not compressed ([ErrUnsupportedCompression]: read it with a [Decoder]).
// It does not check
// the CRC: call [CheckBatch] first on bytes you do not trust.
func NewRecordIter(batch []byte) (RecordIter, error) {
	h, err := readWhole(batch)
	if err == nil {
		err = checkReadable(h)
	}
	if err != nil {
		return RecordIter{}, err
	}
	return recordIter(batch, h), nil
}

// NewRecordIterHeader is NewRecordIter for a caller that has read the
// batch's header already (with ReadHeader, CheckBatch or Validate) and
// passes it as h, saving a second decoding of it: it checks only that h's
// length covers a header ([ErrCorrupt]), that the whole batch is present
// ([ErrIncomplete]) and that it is not compressed. A header that is not batch's
// makes the records read wrong, never a panic.
func NewRecordIterHeader(batch []byte, h BatchHeader) (RecordIter, error) {
	switch {
	case h.Size() < BatchHeaderSize:
		return RecordIter{}, errorf(ErrCorrupt, "batch length %d is shorter than a header", h.Length)
	case len(batch) < h.Size():
		return RecordIter{}, errorf(ErrIncomplete, "batch needs %d bytes, have %d", h.Size(), len(batch))
	}
	if err := checkReadable(h); err != nil {
		return RecordIter{}, err
	}
	return recordIter(batch, h), nil
}

// NewRecordIterAt is NewRecordIterHeader for a caller that has stepped over
// the first read records of batch by their length prefixes (its CRC
// vouching for their bytes) and wants the rest: the iterator starts at byte
// pos of the batch, after a record of offset delta prev (-1 if read is 0),
// and checks the records from there on, their offset deltas rising from
// prev, and that the batch's NumRecords fill it exactly, as an iterator
// from the first record would. Values that cannot describe such a point
// are ErrCorrupt.
func NewRecordIterAt(batch []byte, h BatchHeader, pos int, read int32, prev int64) (RecordIter, error) {
	it, err := NewRecordIterHeader(batch, h)
	if err != nil {
		return RecordIter{}, err
	}
	return it.at(pos, read, prev)
}

// at moves a fresh iterator to byte pos of its batch, after read records
// the last of which has offset delta prev (see NewRecordIterAt).
func (it RecordIter) at(pos int, read int32, prev int64) (RecordIter, error) {
	if err := checkStart(&it.h, len(it.b), pos, read, prev); err != nil {
		return RecordIter{}, err
	}
	it.pos, it.n, it.prev = pos, read, prev
	return it, nil
}

// recordIter returns an iterator over the records of batch, whose header h
// is checked and whose h.Size() bytes are present.
func recordIter(batch []byte, h BatchHeader) RecordIter {
	return plainIter(batch[:h.Size()], h)
}

// plainIter returns an iterator over the records of plain, the header of a
// batch whose header h is checked followed by its records uncompressed, and
// nothing after them: the batch itself if it is uncompressed, or the
// buffer a Decoder decompressed it into.
func plainIter(plain []byte, h BatchHeader) RecordIter {
	return RecordIter{b: plain, h: h, pos: BatchHeaderSize, prev: -1}
}

// Header returns the header of the batch being iterated.
func (it *RecordIter) Header() BatchHeader { return it.h }

// Err returns the [ErrCorrupt] error that ended the iteration early, or nil
// if Next stopped after the last record.
func (it *RecordIter) Err() error { return it.err }

// StoredTimestamp returns the timestamp the last record read carries in the
// batch, in milliseconds: BaseTimestamp plus its timestamp delta. It is
// r.Timestamp except in LogAppendTime batches, where r.Timestamp is the
// batch's MaxTimestamp.
func (it *RecordIter) StoredTimestamp() int64 { return it.stored }

// Next reads the next record into r and reports whether there was one. It
// sets every field of r: Offset and Timestamp are absolute (in a
// LogAppendTime batch every record's Timestamp is MaxTimestamp, in UTC);
// Key, Value and header Values alias the batch bytes; Headers reuses the
// backing array of r.Headers, so a Record passed to Next again loses its
// previous headers. Only headers allocate: a string per key, and a longer
// r.Headers when its capacity is short.
func (it *RecordIter) Next(r *Record) bool {
	return it.next(r)
}

// next reads one record into r, or only checks it if r is nil. It keeps
// its position in locals and stops at the first problem, which it reports
// through fail or failVarint naming the field.
func (it *RecordIter) next(r *Record) bool {
	if it.err != nil {
		return false
	}
	if it.n == it.h.NumRecords {
		if it.pos != len(it.b) {
			it.err = errorf(ErrCorrupt, "%d bytes after the last of %d records", len(it.b)-it.pos, it.n)
		}
		return false
	}
	b := it.b
	u, p := uvarintShort(b, it.pos)
	if p == 0 {
		u, p = uvarintAt(b, it.pos, maxVarintLen, maxVarintLast)
	}
	if p <= 0 {
		return it.failVarint("record length")
	}
	length := unzigzag32(uint32(u))
	if length < minRecordBody || int64(length) > int64(len(b)-p) {
		return it.fail("record length", int64(length))
	}
	b = b[:p+int(length)] // the record ends here; no field may cross it
	if r != nil {
		r.Headers = r.Headers[:0]
	}
	if attrs := b[p]; attrs != 0 {
		return it.fail("record attributes", int64(attrs))
	}

	q := 0
	if u, q = uvarintShort(b, p+1); q == 0 {
		u, q = uvarintAt(b, p+1, maxVarlongLen, maxVarlongLast)
	}
	if p = q; p <= 0 {
		return it.failVarint("timestamp delta")
	}
	tsDelta := unzigzag64(u)
	if u, q = uvarintShort(b, p); q == 0 {
		u, q = uvarintAt(b, p, maxVarintLen, maxVarintLast)
	}
	if p = q; p <= 0 {
		return it.failVarint("offset delta")
	}
	offDelta := int64(unzigzag32(uint32(u)))
	if offDelta <= it.prev || offDelta > int64(it.h.LastOffsetDelta) {
		return it.fail("offset delta", offDelta)
	}

	if u, q = uvarintShort(b, p); q == 0 {
		u, q = uvarintAt(b, p, maxVarintLen, maxVarintLast)
	}
	if p = q; p <= 0 {
		return it.failVarint("key length")
	}
	n := unzigzag32(uint32(u))
	key, p, ok := field(b, p, n, true)
	if !ok {
		return it.fail("key length", int64(n))
	}
	if u, q = uvarintShort(b, p); q == 0 {
		u, q = uvarintAt(b, p, maxVarintLen, maxVarintLast)
	}
	if p = q; p <= 0 {
		return it.failVarint("value length")
	}
	n = unzigzag32(uint32(u))
	value, p, ok := field(b, p, n, true)
	if !ok {
		return it.fail("value length", int64(n))
	}

	if u, q = uvarintShort(b, p); q == 0 {
		u, q = uvarintAt(b, p, maxVarintLen, maxVarintLast)
	}
	if p = q; p <= 0 {
		return it.failVarint("header count")
	}
	count := unzigzag32(uint32(u))
	if count < 0 || int64(count) > int64(len(b)-p)/2 { // a header takes 2 bytes or more
		return it.fail("header count", int64(count))
	}
	if count > 0 {
		if p, ok = it.headers(r, b, p, count); !ok {
			return false
		}
	}
	if p != len(b) {
		return it.fail("record length (bytes left over)", int64(length))
	}

	it.stored = it.h.BaseTimestamp + tsDelta
	if r != nil {
		ts := it.stored
		if it.h.Attributes&AttrLogAppendTime != 0 {
			ts = it.h.MaxTimestamp
		}
		if !it.haveLast || ts != it.lastTS {
			it.lastTS, it.lastTime, it.haveLast = ts, time.UnixMilli(ts).UTC(), true
		}
		r.Offset = it.h.BaseOffset + offDelta
		r.Timestamp = it.lastTime
		r.Key, r.Value = key, value
	}
	it.pos = p
	it.n++
	it.prev = offDelta
	return true
}

// headers reads count headers at b[p:] into r.Headers (if r is not nil) and
// returns where they end, or false after recording a problem.
func (it *RecordIter) headers(r *Record, b []byte, p int, count int32) (int, bool) {
	if r != nil {
		r.Headers = slices.Grow(r.Headers, int(count))
	}
	for range count {
		u, q := uvarintAt(b, p, maxVarintLen, maxVarintLast)
		if q <= 0 {
			return 0, it.failVarint("header key length")
		}
		n := unzigzag32(uint32(u))
		k, q, ok := field(b, q, n, false)
		if !ok {
			return 0, it.fail("header key length", int64(n))
		}
		if u, q = uvarintAt(b, q, maxVarintLen, maxVarintLast); q <= 0 {
			return 0, it.failVarint("header value length")
		}
		n = unzigzag32(uint32(u))
		v, q, ok := field(b, q, n, true)
		if !ok {
			return 0, it.fail("header value length", int64(n))
		}
		if r != nil {
			r.Headers = append(r.Headers, Header{Key: string(k), Value: v})
		}
		p = q
	}
	return p, true
}

// field returns the n bytes at b[p:] and the position after them; n = -1
// is a nil field when nullable. It returns false if n is negative
// otherwise, or longer than what b has left. The field aliases b with its
// capacity clipped to its length.
func field(b []byte, p int, n int32, nullable bool) ([]byte, int, bool) {
	if n == -1 && nullable {
		return nil, p, true
	}
	if n < 0 || int(n) > len(b)-p {
		return nil, p, false
	}
	end := p + int(n)
	return b[p:end:end], end, true
}

// fail records that the current record has a bad field, what, of value v,
// and returns false.
func (it *RecordIter) fail(what string, v int64) bool {
	it.err = errorf(ErrCorrupt, "record %d at byte %d: bad %s %d", it.n, it.pos, what, v)
	return false
}

// failVarint records that the current record has a malformed varint, what,
// and returns false.
func (it *RecordIter) failVarint(what string) bool {
	it.err = errorf(ErrCorrupt, "record %d at byte %d: bad %s varint", it.n, it.pos, what)
	return false
}

// Validate checks the batch at the start of b as [CheckBatch] does, then
// walks its records: each must be well formed (attributes 0, minimal
// varints, lengths of -1 or more that fit the record, header keys not null,
// no bytes left over), with offset deltas that increase strictly within [0,
// LastOffsetDelta], and there must be exactly NumRecords of them filling the
// batch exactly. A batch Validate accepts re-encodes to the same bytes with
// [EncodeBatchWithHeader].
func Validate(b []byte) (BatchHeader, error) {
	h, err := CheckBatch(b)
	if err == nil {
		err = checkReadable(h)
	}
	if err != nil {
		return h, err
	}
	it := recordIter(b, h)
	for it.next(nil) {
	}
	return h, it.err
}

// Records returns an iterator over the records of the batch at the start of
// batch, checked as [NewRecordIter] and [RecordIter.Next] check them (not the
// CRC). It yields a single error, as its last pair, if the batch is bad.
// Unlike Next it gives each record its own Headers slice (allocated only for
// records that have headers), so yielded records stay valid as long as the
// batch bytes do.
func Records(batch []byte) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		it, err := NewRecordIter(batch)
		if err != nil {
			yield(Record{}, err)
			return
		}
		for {
			var r Record
			if !it.Next(&r) {
				break
			}
			if !yield(r, nil) {
				return
			}
		}
		if err := it.Err(); err != nil {
			yield(Record{}, err)
		}
	}
}
