package log

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"slices"
	"sync"
)

// BatchOptions are the batch-level fields [EncodeBatch] writes.
type BatchOptions struct {
	// BaseOffset is the offset of the first record; the records get
	// BaseOffset, BaseOffset+1, and so on. Usually 0: the partition stamps
	// the real one later with [SetBaseOffset].
	BaseOffset int64
	// TimestampType is CreateTime (the zero value) or LogAppendTime.
	TimestampType TimestampType
	// Now is the current time in milliseconds since the Unix epoch. It is
	// the timestamp of every record whose Timestamp is zero and, for
	// LogAppendTime, the batch's MaxTimestamp.
	Now int64
	// Idempotent writes ProducerID, ProducerEpoch and BaseSequence; when it
	// is false all three are written as -1 (no producer).
	Idempotent    bool
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	// Transactional sets the transactional attribute: the batch belongs to
	// its producer's open transaction, which a COMMIT or ABORT marker (see
	// [EncodeControlBatch]) ends. It needs Idempotent ([ErrInvalidBatch]
	// otherwise): a transaction is known by its producer id.
	Transactional bool
	// Compression compresses the records section with a codec (None, the
	// zero value, does not). A batch that would not get smaller is written
	// uncompressed, as librdkafka and franz-go do (Kafka's Java producer
	// keeps the codec whatever the size).
	Compression Compression
	// CompressionLevel is the codec's level (see CheckLevel); zero is its
	// default.
	CompressionLevel int
}

// EncodeBatch appends one batch holding recs, compressed as opts.Compression
// says, to dst and returns the extended slice. Records get offset deltas
// 0..len(recs)-1 (their Offset fields are ignored); baseTimestamp is the
// first record's timestamp and maxTimestamp the largest one (opts.Now for
// LogAppendTime); the partition leader epoch is -1. With no records it
// returns dst and [ErrEmptyBatch]; a record or batch too large for the format
// fails with [ErrInvalidBatch].
//
// EncodeBatch grows dst at most once, and not at all when its capacity
// suffices. It does not retain recs. On error the returned slice is dst as
// given, though its spare capacity (past len(dst)) may have been written.
func EncodeBatch(dst []byte, recs []Record, opts BatchOptions) ([]byte, error) {
	var h BatchHeader
	return encodeBatch(dst, recs, opts, &h)
}

// EncodeBatchHeader is [EncodeBatch] returning also the header of the batch
// it appended, as [ReadHeader] reads it back, which saves a caller that
// needs the header (as an append to a log does) reading what it has just
// written.
func EncodeBatchHeader(dst []byte, recs []Record, opts BatchOptions) ([]byte, BatchHeader, error) {
	var h BatchHeader
	out, err := encodeBatch(dst, recs, opts, &h)
	if err != nil {
		return out, BatchHeader{}, err
	}
	return out, h, nil
}

// encodeBatch is EncodeBatch, leaving the batch's header in *h.
func encodeBatch(dst []byte, recs []Record, opts BatchOptions, h *BatchHeader) ([]byte, error) {
	if len(recs) == 0 {
		return dst, ErrEmptyBatch
	}
	if len(recs) > math.MaxInt32 {
		return dst, errorf(ErrInvalidBatch, "%d records, at most %d", len(recs), math.MaxInt32)
	}
	// The constant fields first, then the others one by one: a literal
	// with all of them is built in a temporary and copied in wide moves,
	// which stall on the narrow stores just made to it.
	*h = BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	h.BaseOffset = opts.BaseOffset
	h.LastOffsetDelta = int32(len(recs) - 1)
	h.BaseTimestamp = recordTime(&recs[0], true, opts.Now)
	switch opts.TimestampType {
	case CreateTime:
	case LogAppendTime:
		h.Attributes |= AttrLogAppendTime
	default:
		return dst, errorf(ErrInvalidBatch, "unknown timestamp type %d", opts.TimestampType)
	}
	if opts.Transactional {
		if !opts.Idempotent {
			return dst, errorf(ErrInvalidBatch, "a transactional batch needs a producer id (Idempotent)")
		}
		h.Attributes |= AttrTransactional
	}
	if opts.Idempotent {
		h.ProducerID, h.ProducerEpoch, h.BaseSequence = opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence
	}
	if err := CheckLevel(opts.Compression, opts.CompressionLevel); err != nil {
		return dst, err
	}
	start := len(dst)
	e := encoder{h: h, assign: true, now: opts.Now, noCRC: opts.Compression != None}
	out, err := e.appendAssigned(dst, recs)
	if err != nil || opts.Compression == None {
		return out, err
	}
	if out, err = compressBatch(out, start, opts.Compression, opts.CompressionLevel); err != nil {
		return out, err
	}
	*h, err = ReadHeader(out[start:]) // compression changed Length, Attributes and CRC
	return out, err
}

// EncodeBatchWithHeader appends one batch holding recs to dst and returns
// the extended slice. It writes every header field from h as it is
// except Magic, Length, NumRecords and CRC, which it computes. Each record's
// offset delta is rec.Offset - h.BaseOffset, which must lie in [0,
// h.LastOffsetDelta] and increase strictly from record to record; its
// timestamp delta is rec.Timestamp (in ms, zero or not) - h.BaseTimestamp. In a
// LogAppendTime batch readers report MaxTimestamp for every record, but the
// deltas written are still those of the records' own timestamps.
//
// A codec in h.Attributes compresses the records with that codec's default
// level (as Kafka's cleaner rebuilds a compressed batch), unless that would
// not make the batch smaller: it is then written uncompressed. Zero records
// make a valid empty batch, as compaction leaves. Records out of order or
// out of range fail with [ErrInvalidBatch], a codec this package does not
// know with [ErrUnsupportedCompression]. Every uncompressed batch that
// [Validate] accepts is reproduced byte for byte from its header and the
// records read from it (with [RecordIter.StoredTimestamp] as their
// timestamps in a LogAppendTime batch).
func EncodeBatchWithHeader(dst []byte, h BatchHeader, recs []Record) ([]byte, error) {
	c := h.Compression()
	if err := CheckLevel(c, 0); err != nil {
		return dst, err
	}
	if h.LastOffsetDelta < 0 {
		return dst, errorf(ErrInvalidBatch, "negative last offset delta %d", h.LastOffsetDelta)
	}
	h.Attributes &^= AttrCompressionMask
	var plans [planCache]recordPlan
	e := encoder{h: &h, plans: plans[:], noCRC: c != None}
	size, _, err := e.measure(recs, 0, 0)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	out := e.append(dst, recs, size)
	if c == None {
		return out, nil
	}
	return compressBatch(out, start, c, 0)
}

// compressScratch recycles the buffers records are compressed into.
var compressScratch = sync.Pool{New: func() any { return new([]byte) }}

// compressBatch compresses, with c at level, the records of the
// uncompressed batch at dst[start:], whose header is written but not its
// CRC, if that makes the batch smaller; either way it writes the CRC. None
// only writes the CRC.
func compressBatch(dst []byte, start int, c Compression, level int) ([]byte, error) {
	b := dst[start:]
	if c == None {
		binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
		return dst, nil
	}
	records := b[BatchHeaderSize:]
	bufp := compressScratch.Get().(*[]byte)
	defer compressScratch.Put(bufp)
	out, err := compress((*bufp)[:0], c, level, records)
	*bufp = out[:0]
	if err != nil {
		return dst[:start], err
	}
	if len(out) < len(records) {
		dst = append(dst[:start+BatchHeaderSize], out...)
		b = dst[start:]
		be := binary.BigEndian
		be.PutUint32(b[offLength:], uint32(len(b)-lengthOverhead))
		be.PutUint16(b[offAttributes:], be.Uint16(b[offAttributes:])&^AttrCompressionMask|uint16(c))
	}
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
	return dst, nil
}

// encoder writes the records of a batch. EncodeBatchWithHeader's takes two
// passes: measure checks them and sizes the batch, append writes it into a
// buffer grown once. measure keeps what it works out for each record in
// plans, so that append only writes; records past the end of plans are
// worked out again. EncodeBatch's, appendAssigned, writes each record as
// soon as it has worked it out, into the buffer's spare capacity, and falls
// back on the two passes for the records that do not fit.
type encoder struct {
	h *BatchHeader
	// noCRC leaves the CRC to compressBatch, which computes it over the
	// compressed records.
	noCRC bool
	// assign is EncodeBatch's mode: offset deltas are record indexes and
	// zero timestamps are now. Otherwise both come from the records.
	assign bool
	now    int64
	plans  []recordPlan
}

// planCache is the number of records whose plans an encoder keeps, in an
// array on the stack (2 KiB): enough for the usual batch.
const planCache = 128

// recordPlan is what an encoder works out for one record before writing it.
type recordPlan struct {
	tsDelta  int64 // timestamp - BaseTimestamp
	offDelta int32 // offset - BaseOffset
	body     int32 // size after the length varint
}

// recordTime returns r's timestamp in ms; with assign a zero one is now.
func recordTime(r *Record, assign bool, now int64) int64 {
	if assign && r.Timestamp.IsZero() {
		return now
	}
	return r.Timestamp.UnixMilli()
}

// plan works out the plan of the i-th record r, which measure has checked:
// putRecords uses it for the records past those measure kept plans for.
func (e *encoder) plan(i int, r *Record) recordPlan {
	off := int64(i)
	if !e.assign {
		off = r.Offset - e.h.BaseOffset
	}
	tsDelta := recordTime(r, e.assign, e.now) - e.h.BaseTimestamp
	return recordPlan{tsDelta: tsDelta, offDelta: int32(off), body: int32(bodySize(r, int32(off), tsDelta))}
}

// measure checks recs[from:], fills e.plans with their plans as far as they
// go and returns the size of the records' encoding (written bytes for
// recs[:from], already encoded, plus the size of recs[from:]) and the
// largest timestamp of recs[from:].
func (e *encoder) measure(recs []Record, from int, written int64) (size, maxTs int64, err error) {
	h := e.h
	prev := int64(-1)
	if from > 0 && !e.assign {
		prev = recs[from-1].Offset - h.BaseOffset
	}
	size, maxTs = written, math.MinInt64
	for i := from; i < len(recs); i++ {
		r := &recs[i]
		off := int64(i)
		if !e.assign {
			off = r.Offset - h.BaseOffset
			if off <= prev || off > int64(h.LastOffsetDelta) {
				return 0, 0, e.offsetError(i, r.Offset, prev)
			}
			prev = off
		}
		ts := recordTime(r, e.assign, e.now)
		tsDelta := ts - h.BaseTimestamp
		// bodySize, written out: the compiler does not inline it here.
		body := int64(1+SizeVarlong(tsDelta)+SizeVarint(int32(off))) + bytesSize(r.Key) + bytesSize(r.Value)
		if len(r.Headers) == 0 {
			body++
		} else {
			body += headersSize(r.Headers)
		}
		if body > maxLength {
			return 0, 0, errorf(ErrInvalidBatch, "record %d: %d bytes, at most %d", i, body, maxLength)
		}
		maxTs = max(maxTs, ts)
		if j := i - from; j < len(e.plans) {
			e.plans[j] = recordPlan{tsDelta: tsDelta, offDelta: int32(off), body: int32(body)}
		}
		size += int64(uvarintSize(uint64(body)<<1)) + body // the zig-zag of a positive int32
	}
	if total := minLength + size; total > maxLength {
		return 0, 0, errorf(ErrInvalidBatch, "batch length %d, at most %d", total, maxLength)
	}
	return size, maxTs, nil
}

// appendAssigned is EncodeBatch's encoder. It writes the batch's header
// first, all of it but Length (outside the CRC), so that the CRC reads
// bytes the CPU has long stored rather than stores still in flight. While
// dst's spare capacity has room, it works out each record (as measure
// does) and writes it at once. A record that does not fit makes it measure
// the records from there on, which checks them as measure does, grow dst
// once to the batch's size and write them. With enough capacity, as when a
// buffer is reused for batches alike, the batch is written in one pass; the
// bytes and the errors are the same either way. (Records written before
// one too large for the format leave their bytes in dst's spare capacity,
// which the caller gets back as it was given.) e is taken by value so that
// the plans array it may be given stays on this call's stack.
func (e encoder) appendAssigned(dst []byte, recs []Record) ([]byte, error) {
	h := e.h
	h.Magic = Magic
	h.NumRecords = int32(len(recs))
	// The first record's timestamp is the batch's largest as far as is
	// known before the records are written; MaxTimestamp is patched at the
	// end if a later one is larger.
	logAppend := h.Attributes&AttrLogAppendTime != 0 // not h.TimestampType(), which copies *h
	h.MaxTimestamp = h.BaseTimestamp
	if logAppend {
		h.MaxTimestamp = e.now
	}
	maxTs := h.BaseTimestamp
	start := len(dst)
	b := dst[start:cap(dst)]
	if len(b) > lengthOverhead+maxLength {
		b = b[:lengthOverhead+maxLength] // every record that fits is then small enough
	}
	p := BatchHeaderSize
	i := 0
	if len(b) >= BatchHeaderSize {
		putHeader(b, h)
		for ; i < len(recs); i++ {
			r := &recs[i]
			ts := recordTime(r, true, e.now)
			tsDelta := ts - h.BaseTimestamp
			// bodySize, written out: the compiler does not inline it here.
			body := int64(1+SizeVarlong(tsDelta)+SizeVarint(int32(i))) + bytesSize(r.Key) + bytesSize(r.Value)
			if len(r.Headers) == 0 {
				body++
			} else {
				body += headersSize(r.Headers)
			}
			if int64(uvarintSize(uint64(body)<<1))+body > int64(len(b)-p) {
				break
			}
			maxTs = max(maxTs, ts)
			p = putRecord(b, p, r, recordPlan{tsDelta: tsDelta, offDelta: int32(i), body: int32(body)})
		}
	}
	if i < len(recs) {
		var plans [planCache]recordPlan
		e.plans = plans[:]
		size, restMax, err := e.measure(recs, i, int64(p-BatchHeaderSize))
		if err != nil {
			return dst, err
		}
		maxTs = max(maxTs, restMax)
		keep := start // the records written so far, if any, and room for the header
		if i > 0 {
			keep += p
		}
		end := start + BatchHeaderSize + int(size)
		dst = slices.Grow(dst[:keep], end-keep)
		b = dst[start:end]
		putHeader(b, h)
		p = e.putRecords(b, p, recs, i)
	}
	b = b[:p]
	h.Length = int32(p - lengthOverhead)
	binary.BigEndian.PutUint32(b[offLength:], uint32(h.Length))
	if !logAppend && maxTs != h.MaxTimestamp {
		h.MaxTimestamp = maxTs
		binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(maxTs))
	}
	if !e.noCRC {
		h.CRC = crc32.Checksum(b[offAttributes:], castagnoli)
		binary.BigEndian.PutUint32(b[offCRC:], h.CRC)
	}
	return dst[:start+p], nil
}

// offsetError reports the i-th record's offset out of order or range, prev
// being the offset delta of the record before it.
func (e *encoder) offsetError(i int, offset, prev int64) error {
	return errorf(ErrInvalidBatch, "record %d: offset %d outside (%d, %d]",
		i, offset, e.h.BaseOffset+prev, e.h.LastOffset())
}

// bodySize returns the size of r's encoding after its length varint. A
// field longer than the format allows (a header takes 2 bytes or more, so
// too many headers too) makes it exceed maxLength.
func bodySize(r *Record, offDelta int32, tsDelta int64) int64 {
	return int64(1+SizeVarlong(tsDelta)+SizeVarint(offDelta)) + fieldsSize(r)
}

// fieldsSize returns the size of the part of r's encoding that does not
// depend on its place in a batch: key, value and headers with their lengths.
func fieldsSize(r *Record) int64 {
	n := bytesSize(r.Key) + bytesSize(r.Value)
	if len(r.Headers) == 0 {
		return n + 1
	}
	return n + headersSize(r.Headers)
}

// RecordFieldsSize returns the bytes r's key, value and headers take in a
// batch, with their lengths: the part of its encoded size that does not
// depend on its place in the batch. A producer sizing batches computes it
// once per record and then asks RecordSize for each place it considers.
func RecordFieldsSize(r *Record) int { return int(fieldsSize(r)) }

// RecordSize returns the encoded size, length prefix included, of a record
// whose fields take fields bytes (RecordFieldsSize), at offset delta
// offsetDelta and timestamp delta timestampDelta from its batch's base.
func RecordSize(fields int, offsetDelta int32, timestampDelta int64) int {
	body := 1 + SizeVarlong(timestampDelta) + SizeVarint(offsetDelta) + fields
	return SizeVarint(int32(body)) + body
}

// headersSize returns the size of the encoding of hs with their count.
func headersSize(hs []Header) int64 {
	n := int64(SizeVarint(int32(len(hs))))
	for i := range hs {
		hd := &hs[i]
		n += int64(SizeVarint(int32(len(hd.Key))) + len(hd.Key))
		n += bytesSize(hd.Value)
	}
	return n
}

// bytesSize returns the size of b with its length varint; nil is length -1.
func bytesSize(b []byte) int64 {
	return int64(uvarintSize(lengthOf(b))) + int64(len(b))
}

// append writes the header and the records measured at size bytes to dst.
// It writes in place, by index, into dst grown once to its final length.
func (e *encoder) append(dst []byte, recs []Record, size int64) []byte {
	start := len(dst)
	end := start + BatchHeaderSize + int(size)
	dst = slices.Grow(dst, end-start)[:end]
	b := dst[start:]
	e.putRecords(b, BatchHeaderSize, recs, 0)
	return e.finish(dst, b, len(recs))
}

// putRecords writes recs[from:], measured from the start of e.plans, at
// b[p:] and returns where they end.
func (e *encoder) putRecords(b []byte, p int, recs []Record, from int) int {
	for i := from; i < len(recs); i++ {
		var pl recordPlan
		if j := i - from; j < len(e.plans) {
			pl = e.plans[j]
		} else {
			pl = e.plan(i, &recs[i])
		}
		p = putRecord(b, p, &recs[i], pl)
	}
	return p
}

// finish writes the header of the batch b, whose n records are written after
// it, with its CRC, and returns dst, which ends with b.
func (e *encoder) finish(dst, b []byte, n int) []byte {
	h := e.h
	h.Magic = Magic
	h.Length = int32(len(b) - lengthOverhead)
	h.NumRecords = int32(n)
	putHeader(b, h)
	if !e.noCRC {
		binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
	}
	return dst
}

// putRecord writes r, planned as pl, at b[p:] and returns where it ends.
func putRecord(b []byte, p int, r *Record, pl recordPlan) int {
	p = putUvarint(b, p, zigzag32(pl.body))
	b[p] = 0 // attributes
	p = putUvarint(b, p+1, zigzag64(pl.tsDelta))
	p = putUvarint(b, p, zigzag32(pl.offDelta))
	p = putUvarint(b, p, lengthOf(r.Key))
	p += copy(b[p:], r.Key)
	p = putUvarint(b, p, lengthOf(r.Value))
	p += copy(b[p:], r.Value)
	p = putUvarint(b, p, zigzag32(int32(len(r.Headers))))
	for j := range r.Headers {
		hd := &r.Headers[j]
		p = putUvarint(b, p, zigzag32(int32(len(hd.Key))))
		p += copy(b[p:], hd.Key)
		p = putUvarint(b, p, lengthOf(hd.Value))
		p += copy(b[p:], hd.Value)
	}
	return p
}

// putHeader writes h's 61 bytes at the start of b, its CRC field as it is.
func putHeader(b []byte, h *BatchHeader) {
	be := binary.BigEndian
	_ = b[BatchHeaderSize-1]
	be.PutUint64(b, uint64(h.BaseOffset))
	be.PutUint32(b[offLength:], uint32(h.Length))
	be.PutUint32(b[offLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	b[offMagic] = byte(h.Magic)
	be.PutUint32(b[offCRC:], h.CRC)
	be.PutUint16(b[offAttributes:], uint16(h.Attributes))
	be.PutUint32(b[offLastDelta:], uint32(h.LastOffsetDelta))
	be.PutUint64(b[offBaseTimestamp:], uint64(h.BaseTimestamp))
	be.PutUint64(b[offMaxTimestamp:], uint64(h.MaxTimestamp))
	be.PutUint64(b[offProducerID:], uint64(h.ProducerID))
	be.PutUint16(b[offProducerEpoch:], uint16(h.ProducerEpoch))
	be.PutUint32(b[offBaseSequence:], uint32(h.BaseSequence))
	be.PutUint32(b[offNumRecords:], uint32(h.NumRecords))
}

// lengthOf returns the zig-zag encoded length of b, -1 if b is nil.
func lengthOf(b []byte) uint64 {
	if b == nil {
		return 1 // zig-zag -1
	}
	return zigzag32(int32(len(b)))
}
