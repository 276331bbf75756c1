package log

// This file is the codec as it was before it was optimised, kept as a
// reference that the fast one must match byte for byte and error for error
// (FuzzReference).

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/bits"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func refAppendBatch(dst []byte, recs []Record, opts BatchOptions) ([]byte, error) {
	if len(recs) == 0 {
		return dst, ErrEmptyBatch
	}
	if len(recs) > math.MaxInt32 {
		return dst, errorf(ErrInvalidBatch, "%d records, at most %d", len(recs), math.MaxInt32)
	}
	h := BatchHeader{
		BaseOffset:           opts.BaseOffset,
		PartitionLeaderEpoch: -1,
		LastOffsetDelta:      int32(len(recs) - 1),
		BaseTimestamp:        refRecordTime(&recs[0], true, opts.Now),
		ProducerID:           -1,
		ProducerEpoch:        -1,
		BaseSequence:         -1,
	}
	switch opts.TimestampType {
	case CreateTime:
	case LogAppendTime:
		h.Attributes |= AttrLogAppendTime
	default:
		return dst, errorf(ErrInvalidBatch, "unknown timestamp type %d", opts.TimestampType)
	}
	if opts.Idempotent {
		h.ProducerID, h.ProducerEpoch, h.BaseSequence = opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence
	}
	e := refEncoder{h: &h, assign: true, now: opts.Now}
	size, maxTs, err := e.measure(recs)
	if err != nil {
		return dst, err
	}
	h.MaxTimestamp = maxTs
	if h.TimestampType() == LogAppendTime {
		h.MaxTimestamp = opts.Now
	}
	return e.append(dst, recs, size), nil
}

func refAppendBatchHeader(dst []byte, h BatchHeader, recs []Record) ([]byte, error) {
	if c := h.Compression(); c != None {
		return dst, errorf(ErrUnsupportedCompression, "cannot encode records with %s", c)
	}
	if h.LastOffsetDelta < 0 {
		return dst, errorf(ErrInvalidBatch, "negative last offset delta %d", h.LastOffsetDelta)
	}
	e := refEncoder{h: &h}
	size, _, err := e.measure(recs)
	if err != nil {
		return dst, err
	}
	return e.append(dst, recs, size), nil
}

// refEncoder writes the records of a batch in two passes: measure checks them
// and sizes the batch, append writes it into a buffer grown once.
type refEncoder struct {
	h *BatchHeader
	// assign is refAppendBatch's mode: offset deltas are record indexes and
	// zero timestamps are now. Otherwise both come from the records.
	assign bool
	now    int64
}

// refRecordTime returns r's timestamp in ms; with assign a zero one is now.
func refRecordTime(r *Record, assign bool, now int64) int64 {
	if assign && r.Timestamp.IsZero() {
		return now
	}
	return r.Timestamp.UnixMilli()
}

// deltas returns the offset and timestamp deltas of the i-th record r, and
// its timestamp.
func (e *refEncoder) deltas(i int, r *Record) (offDelta int64, tsDelta, ts int64) {
	offDelta = int64(i)
	if !e.assign {
		offDelta = r.Offset - e.h.BaseOffset
	}
	ts = refRecordTime(r, e.assign, e.now)
	return offDelta, ts - e.h.BaseTimestamp, ts
}

// measure checks recs and returns the size of their encoding and their
// largest timestamp.
func (e *refEncoder) measure(recs []Record) (size, maxTs int64, err error) {
	prev := int64(-1)
	maxTs = math.MinInt64
	for i := range recs {
		r := &recs[i]
		off, tsDelta, ts := e.deltas(i, r)
		if off <= prev || off > int64(e.h.LastOffsetDelta) {
			return 0, 0, errorf(ErrInvalidBatch, "record %d: offset %d outside (%d, %d]",
				i, r.Offset, e.h.BaseOffset+prev, e.h.LastOffset())
		}
		prev = off
		maxTs = max(maxTs, ts)
		body := refBodySize(r, int32(off), tsDelta)
		if body > maxLength {
			return 0, 0, errorf(ErrInvalidBatch, "record %d: %d bytes, at most %d", i, body, maxLength)
		}
		size += int64(refSizeVarint(int32(body))) + body
	}
	if total := minLength + size; total > maxLength {
		return 0, 0, errorf(ErrInvalidBatch, "batch length %d, at most %d", total, maxLength)
	}
	return size, maxTs, nil
}

// refBodySize returns the size of r's encoding after its length varint. A
// field longer than the format allows (a header takes 2 bytes or more, so
// too many headers too) makes it exceed maxLength.
func refBodySize(r *Record, offDelta int32, tsDelta int64) int64 {
	n := int64(1 + refSizeVarlong(tsDelta) + refSizeVarint(offDelta))
	n += refBytesSize(r.Key) + refBytesSize(r.Value) + int64(refSizeVarint(int32(len(r.Headers))))
	for i := range r.Headers {
		hd := &r.Headers[i]
		n += int64(refSizeVarint(int32(len(hd.Key))) + len(hd.Key))
		n += refBytesSize(hd.Value)
	}
	return n
}

// refBytesSize returns the size of b with its length varint; nil is length -1.
func refBytesSize(b []byte) int64 {
	if b == nil {
		return 1
	}
	return int64(refSizeVarint(int32(len(b)))) + int64(len(b))
}

// append writes the header and the records measured at size bytes to dst.
func (e *refEncoder) append(dst []byte, recs []Record, size int64) []byte {
	h := e.h
	h.Magic = Magic
	h.Length = int32(minLength + size)
	h.NumRecords = int32(len(recs))
	start := len(dst)
	dst = slices.Grow(dst, BatchHeaderSize+int(size))
	dst = refAppendHeader(dst, h)
	for i := range recs {
		r := &recs[i]
		off, tsDelta, _ := e.deltas(i, r)
		dst = refAppendVarint(dst, int32(refBodySize(r, int32(off), tsDelta)))
		dst = append(dst, 0) // attributes
		dst = refAppendVarlong(dst, tsDelta)
		dst = refAppendVarint(dst, int32(off))
		dst = refAppendBytes(dst, r.Key)
		dst = refAppendBytes(dst, r.Value)
		dst = refAppendVarint(dst, int32(len(r.Headers)))
		for j := range r.Headers {
			hd := &r.Headers[j]
			dst = refAppendVarint(dst, int32(len(hd.Key)))
			dst = append(dst, hd.Key...)
			dst = refAppendBytes(dst, hd.Value)
		}
	}
	b := dst[start:]
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
	return dst
}

// refAppendHeader appends h's 61 bytes, its CRC field as it is.
func refAppendHeader(dst []byte, h *BatchHeader) []byte {
	be := binary.BigEndian
	dst = be.AppendUint64(dst, uint64(h.BaseOffset))
	dst = be.AppendUint32(dst, uint32(h.Length))
	dst = be.AppendUint32(dst, uint32(h.PartitionLeaderEpoch))
	dst = append(dst, byte(h.Magic))
	dst = be.AppendUint32(dst, h.CRC)
	dst = be.AppendUint16(dst, uint16(h.Attributes))
	dst = be.AppendUint32(dst, uint32(h.LastOffsetDelta))
	dst = be.AppendUint64(dst, uint64(h.BaseTimestamp))
	dst = be.AppendUint64(dst, uint64(h.MaxTimestamp))
	dst = be.AppendUint64(dst, uint64(h.ProducerID))
	dst = be.AppendUint16(dst, uint16(h.ProducerEpoch))
	dst = be.AppendUint32(dst, uint32(h.BaseSequence))
	return be.AppendUint32(dst, uint32(h.NumRecords))
}

// refAppendBytes appends b with its varint length, -1 for nil.
func refAppendBytes(dst, b []byte) []byte {
	if b == nil {
		return append(dst, 0x01) // zig-zag -1
	}
	dst = refAppendVarint(dst, int32(len(b)))
	return append(dst, b...)
}

type refIter struct {
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

func (it *refIter) next(r *Record) bool {
	if it.err != nil {
		return false
	}
	if it.n == it.h.NumRecords {
		if it.pos != len(it.b) {
			it.err = errorf(ErrCorrupt, "%d bytes after the last of %d records", len(it.b)-it.pos, it.n)
		}
		return false
	}
	f := refFieldReader{b: it.b, p: it.pos}
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
func (it *refIter) fail(f refFieldReader) bool {
	if f.hasVal {
		it.err = errorf(ErrCorrupt, "record %d at byte %d: bad %s %d", it.n, it.pos, f.bad, f.badVal)
	} else {
		it.err = errorf(ErrCorrupt, "record %d at byte %d: bad %s", it.n, it.pos, f.bad)
	}
	return false
}

// refFieldReader reads the fields of one record, b ending where the record
// does. The first problem sticks: it names the field in bad and moves p to
// the end, so later reads find nothing and change nothing.
type refFieldReader struct {
	b      []byte
	p      int
	bad    string // the field that was malformed, "" while all is well
	badVal int64  // its value, if hasVal
	hasVal bool
}

func (f *refFieldReader) fail(what string, v int64) {
	if f.bad == "" {
		f.bad, f.badVal, f.hasVal = what, v, true
	}
	f.p = len(f.b)
}

func (f *refFieldReader) varint(what string) int32 {
	return unzigzag32(uint32(f.uvarint(what, maxVarintLen, maxVarintLast)))
}

func (f *refFieldReader) varlong(what string) int64 {
	return unzigzag64(f.uvarint(what, maxVarlongLen, maxVarlongLast))
}

// uvarint reads an unsigned varint as refReadUvarint does. One- and two-byte
// encodings, which are most of them, take a fast path.
func (f *refFieldReader) uvarint(what string, maxLen int, last byte) uint64 {
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
	u, n := refReadUvarint(b[p:], maxLen, last)
	if n <= 0 {
		f.failVarint(what)
		return 0
	}
	f.p += n
	return u
}

func (f *refFieldReader) failVarint(what string) {
	if f.bad == "" {
		f.bad = what + " varint"
	}
	f.p = len(f.b)
}

// bytes reads a length-prefixed field, what naming its length. Length -1 is
// nil if nullable; the slice returned aliases f.b with its capacity clipped
// to its length.
func (f *refFieldReader) bytes(what string, nullable bool) []byte {
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

// refValidate checks the batch at the start of b as [CheckBatch] does, then
// walks its records: each must be well formed (attributes 0, minimal
// varints, lengths of -1 or more that fit the record, header keys not null,
// no bytes left over), with offset deltas that increase strictly within [0,
// LastOffsetDelta], and there must be exactly NumRecords of them filling the
// batch exactly. A batch refValidate accepts re-encodes to the same bytes with
// [refAppendBatchHeader].
func refValidate(b []byte) (BatchHeader, error) {
	h, err := CheckBatch(b)
	if err != nil {
		return h, err
	}
	it := refIter{b: b[:h.Size()], h: h, pos: BatchHeaderSize, prev: -1}
	for it.next(nil) {
	}
	return h, it.err
}

func refAppendVarint(dst []byte, v int32) []byte {
	return binary.AppendUvarint(dst, zigzag32(v))
}

// refAppendVarlong appends the zig-zag varlong encoding of v to dst.
func refAppendVarlong(dst []byte, v int64) []byte {
	return binary.AppendUvarint(dst, zigzag64(v))
}

// refSizeVarint returns the number of bytes [refAppendVarint] writes for v.
func refSizeVarint(v int32) int {
	return refUvarintSize(zigzag32(v))
}

// refSizeVarlong returns the number of bytes [refAppendVarlong] writes for v.
func refSizeVarlong(v int64) int {
	return refUvarintSize(zigzag64(v))
}

// refUvarintSize returns ceil(bits/7) for the bits u needs (at least 1),
// computed as (9*bits + 64) / 64, which is exact for 1 to 64 bits and
// cheaper than a division by 7.
func refUvarintSize(u uint64) int {
	return int((9*uint(bits.Len64(u|1)) + 64) / 64)
}

// refReadUvarint decodes a minimal unsigned LEB128 of at most maxLen bytes whose
// last byte, when it is the maxLen-th, is at most last. n > 0 is the length
// read, n == 0 means b ends inside the varint, n < 0 a malformed one.
func refReadUvarint(b []byte, maxLen int, last byte) (uint64, int) {
	var u uint64
	for i := 0; i < maxLen; i++ {
		if i == len(b) {
			return 0, 0
		}
		c := b[i]
		if c < 0x80 {
			if (i > 0 && c == 0) || (i == maxLen-1 && c > last) {
				return 0, -1 // padded, or bits beyond the type's width
			}
			return u | uint64(c)<<(7*i), i + 1
		}
		u |= uint64(c&0x7f) << (7 * i)
	}
	return 0, -1 // too long
}

// FuzzReference checks that the codec agrees with the reference one above:
// the same bytes or the same error from both encoders, and the same records,
// stored timestamps and errors from both decoders.
func FuzzReference(f *testing.F) {
	f.Add([]byte("\x03\x10key\x20\x00\x01\x02"), int64(1700000000000), int64(0), false, false)
	f.Add([]byte("\x41\x83\x01\x02\xff\xfe\x09\x00\x00\x00\x00\x00\x00\x80"), int64(-1), int64(1<<40), true, true)
	f.Add(slices.Repeat([]byte{0x03, 0x07, 0x0b, 0x2c}, planCache), int64(5), int64(9), false, true) // more records than plans
	f.Fuzz(func(t *testing.T, data []byte, now, base int64, logAppend, withHeader bool) {
		recs := fuzzRecords(data, base)
		opts := BatchOptions{BaseOffset: base, Now: now, Idempotent: withHeader, ProducerID: now, ProducerEpoch: 3, BaseSequence: 7}
		if logAppend {
			opts.TimestampType = LogAppendTime
		}
		prefix := []byte("prefix")
		got, err := AppendBatch(slices.Clip(prefix), recs, opts)
		want, refErr := refAppendBatch(slices.Clip(prefix), recs, opts)
		sameError(t, refErr, err)
		require.Equal(t, want, got)

		var h BatchHeader
		if len(data) >= BatchHeaderSize {
			h, _ = ReadHeader(data)
			h.Attributes &^= AttrCompressionMask
			h.BaseOffset = base
		} else {
			h = BatchHeader{BaseOffset: base, LastOffsetDelta: int32(len(recs) + len(data)%3), BaseTimestamp: now}
		}
		got, err = AppendBatchHeader(make([]byte, 3, 40), h, recs)
		want, refErr = refAppendBatchHeader(make([]byte, 3, 40), h, recs)
		sameError(t, refErr, err)
		require.Equal(t, want, got)

		sameDecode(t, data)
		if h, err := ReadHeader(data); err == nil && h.Size() <= len(data) {
			fixed := slices.Clone(data)
			binary.BigEndian.PutUint32(fixed[offCRC:], crc32.Checksum(fixed[offAttributes:h.Size()], castagnoli))
			sameDecode(t, fixed)
		}
		for _, b := range [][]byte{got, want} {
			if len(b) > 3 {
				sameDecode(t, b[3:])
			}
		}
	})
}

// fuzzRecords makes records out of data, with offsets from base on.
func fuzzRecords(data []byte, base int64) []Record {
	var recs []Record
	next := func(n int) []byte {
		n = min(n, len(data))
		b := data[:n:n]
		data = data[n:]
		return b
	}
	off := base
	for len(data) > 0 {
		flags := next(1)[0]
		var r Record
		if flags&1 == 0 {
			r.Key = next(int(flags >> 5))
		}
		if flags&2 == 0 {
			n := 0
			if b := next(2); len(b) == 2 {
				n = int(b[0]) | int(b[1]&0x3f)<<8
			}
			r.Value = next(n)
		}
		if flags&4 != 0 {
			var ts [8]byte
			copy(ts[:], next(int(flags>>3&7)+1))
			r.Timestamp = time.UnixMilli(int64(binary.LittleEndian.Uint64(ts[:])) >> (flags >> 6 * 8))
		}
		if flags&8 != 0 {
			for range int(flags>>4) % 4 {
				hd := Header{Key: string(next(3))}
				if flags&16 == 0 {
					hd.Value = next(5)
				}
				r.Headers = append(r.Headers, hd)
			}
		}
		off += int64(flags%3) + 1 - int64(flags>>7)
		r.Offset = off
		recs = append(recs, r)
	}
	return recs
}

func sameError(t *testing.T, want, got error) {
	t.Helper()
	if want == nil {
		require.NoError(t, got)
		return
	}
	require.Error(t, got)
	require.Equal(t, want.Error(), got.Error())
	kind := errors.Unwrap(want)
	if kind == nil {
		kind = want
	}
	require.ErrorIs(t, got, kind)
}

// sameDecode checks that Validate and RecordIter read b as the reference
// does.
func sameDecode(t *testing.T, b []byte) {
	t.Helper()
	h, err := Validate(b)
	rh, rerr := refValidate(b)
	sameError(t, rerr, err)
	require.Equal(t, rh, h)

	it, err := NewRecordIter(b)
	if err != nil {
		return
	}
	ref := refIter{b: b[:it.h.Size()], h: it.h, pos: BatchHeaderSize, prev: -1}
	var r, rr Record
	r.Headers = make([]Header, 0, 1)
	rr.Headers = make([]Header, 0, 1)
	for {
		ok, rok := it.Next(&r), ref.next(&rr)
		require.Equal(t, rok, ok)
		require.Equal(t, rr, r)
		require.Equal(t, ref.stored, it.StoredTimestamp())
		require.Equal(t, ref.n, it.n)
		if !ok {
			break
		}
		require.Equal(t, ref.pos, it.pos)
	}
	sameError(t, ref.err, it.Err())
}
