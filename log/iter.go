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
// [ReadHeader] does, that the whole batch is present ([ErrIncomplete]) and
// that it is not compressed ([ErrUnsupportedCompression]). It does not check
// the CRC: call [CheckBatch] first on bytes you do not trust.
func NewRecordIter(batch []byte) (RecordIter, error) {
	h, err := readWhole(batch)
	if err == nil {
		err = checkCodec(h)
	}
	if err != nil {
		return RecordIter{}, err
	}
	return RecordIter{b: batch[:h.Size()], h: h, pos: BatchHeaderSize, prev: -1}, nil
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

// next reads one record into r, or only checks it if r is nil.
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
	f := fieldReader{b: it.b, p: it.pos}
	length := f.varint("record length")
	if f.bad == "" && (length < minRecordBody || int64(length) > int64(len(f.b)-f.p)) {
		f.fail("record length", int64(length))
	}
	if f.bad != "" {
		return it.fail(f)
	}
	f.b = f.b[:f.p+int(length)]
	if attrs := f.b[f.p]; attrs != 0 {
		f.fail("record attributes", int64(attrs))
	} else {
		f.p++
	}
	tsDelta := f.varlong("timestamp delta")
	offDelta := int64(f.varint("offset delta"))
	if f.bad == "" && (offDelta <= it.prev || offDelta > int64(it.h.LastOffsetDelta)) {
		f.fail("offset delta", offDelta)
	}
	key := f.bytes("key length", true)
	value := f.bytes("value length", true)
	count := f.varint("header count")
	if f.bad == "" && (count < 0 || int64(count) > int64(len(f.b)-f.p)/2) {
		f.fail("header count", int64(count))
	}
	if r != nil {
		r.Headers = r.Headers[:0]
		if f.bad == "" {
			r.Headers = slices.Grow(r.Headers, int(count))
		}
	}
	for j := int32(0); j < count && f.bad == ""; j++ {
		hk := f.bytes("header key length", false)
		hv := f.bytes("header value length", true)
		if r != nil && f.bad == "" {
			r.Headers = append(r.Headers, Header{Key: string(hk), Value: hv})
		}
	}
	if f.bad == "" && f.p != len(f.b) {
		f.fail("record length (bytes left over)", int64(length))
	}
	if f.bad != "" {
		return it.fail(f)
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
	it.pos = f.p
	it.n++
	it.prev = offDelta
	return true
}

// fail records the problem f found in the current record and returns false.
func (it *RecordIter) fail(f fieldReader) bool {
	if f.hasVal {
		it.err = errorf(ErrCorrupt, "record %d at byte %d: bad %s %d", it.n, it.pos, f.bad, f.badVal)
	} else {
		it.err = errorf(ErrCorrupt, "record %d at byte %d: bad %s", it.n, it.pos, f.bad)
	}
	return false
}

// fieldReader reads the fields of one record, b ending where the record
// does. The first problem sticks: it names the field in bad and moves p to
// the end, so later reads find nothing and change nothing.
type fieldReader struct {
	b      []byte
	p      int
	bad    string // the field that was malformed, "" while all is well
	badVal int64  // its value, if hasVal
	hasVal bool
}

func (f *fieldReader) fail(what string, v int64) {
	if f.bad == "" {
		f.bad, f.badVal, f.hasVal = what, v, true
	}
	f.p = len(f.b)
}

func (f *fieldReader) varint(what string) int32 {
	return unzigzag32(uint32(f.uvarint(what, maxVarintLen, maxVarintLast)))
}

func (f *fieldReader) varlong(what string) int64 {
	return unzigzag64(f.uvarint(what, maxVarlongLen, maxVarlongLast))
}

// uvarint reads an unsigned varint as readUvarint does. One- and two-byte
// encodings, which are most of them, take a fast path.
func (f *fieldReader) uvarint(what string, maxLen int, last byte) uint64 {
	b, p := f.b, f.p
	if p < len(b) {
		if c := b[p]; c < 0x80 {
			f.p = p + 1
			return uint64(c)
		} else if p+1 < len(b) && b[p+1]-1 < 0x7f { // 1..0x7f: last and not padding
			f.p = p + 2
			return uint64(c&0x7f) | uint64(b[p+1])<<7
		}
	}
	u, n := readUvarint(b[p:], maxLen, last)
	if n <= 0 {
		f.failVarint(what)
		return 0
	}
	f.p += n
	return u
}

func (f *fieldReader) failVarint(what string) {
	if f.bad == "" {
		f.bad = what + " varint"
	}
	f.p = len(f.b)
}

// bytes reads a length-prefixed field, what naming its length. Length -1 is
// nil if nullable; the slice returned aliases f.b with its capacity clipped
// to its length.
func (f *fieldReader) bytes(what string, nullable bool) []byte {
	n := f.varint(what)
	if f.bad != "" || (n == -1 && nullable) {
		return nil
	}
	if n < 0 || int64(n) > int64(len(f.b)-f.p) {
		f.fail(what, int64(n))
		return nil
	}
	v := f.b[f.p : f.p+int(n) : f.p+int(n)]
	f.p += int(n)
	return v
}

// Validate checks the batch at the start of b as [CheckBatch] does, then
// walks its records: each must be well formed (attributes 0, minimal
// varints, lengths of -1 or more that fit the record, header keys not null,
// no bytes left over), with offset deltas that increase strictly within [0,
// LastOffsetDelta], and there must be exactly NumRecords of them filling the
// batch exactly. A batch Validate accepts re-encodes to the same bytes with
// [AppendBatchHeader].
func Validate(b []byte) (BatchHeader, error) {
	h, err := CheckBatch(b)
	if err != nil {
		return h, err
	}
	it := RecordIter{b: b[:h.Size()], h: h, pos: BatchHeaderSize, prev: -1}
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
