package log

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"slices"
)

// BatchOptions are the batch-level fields [AppendBatch] writes.
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
}

// AppendBatch appends one uncompressed batch holding recs to dst and returns
// the extended slice. Records get offset deltas 0..len(recs)-1 (their Offset
// fields are ignored); baseTimestamp is the first record's timestamp and
// maxTimestamp the largest one (opts.Now for LogAppendTime); the partition
// leader epoch is -1. With no records it returns dst and [ErrEmptyBatch]; a
// record or batch too large for the format fails with [ErrInvalidBatch].
//
// AppendBatch grows dst at most once, and not at all when its capacity
// suffices. It does not retain recs.
func AppendBatch(dst []byte, recs []Record, opts BatchOptions) ([]byte, error) {
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
		BaseTimestamp:        recordTime(&recs[0], true, opts.Now),
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
	e := encoder{h: &h, assign: true, now: opts.Now}
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

// AppendBatchHeader appends one uncompressed batch holding recs to dst and
// returns the extended slice. It writes every header field from h as it is
// except Magic, Length, NumRecords and CRC, which it computes. Each record's
// offset delta is rec.Offset - h.BaseOffset, which must lie in [0,
// h.LastOffsetDelta] and increase strictly from record to record; its
// timestamp delta is rec.Timestamp (in ms, zero or not) - h.BaseTimestamp. In a
// LogAppendTime batch readers report MaxTimestamp for every record, but the
// deltas written are still those of the records' own timestamps.
//
// Zero records make a valid empty batch, as compaction leaves. Records out
// of order or out of range fail with [ErrInvalidBatch], compression bits in
// h.Attributes with [ErrUnsupportedCompression]. Every batch that
// [Validate] accepts is reproduced byte for byte from its header and the
// records read from it (with [RecordIter.StoredTimestamp] as their
// timestamps in a LogAppendTime batch).
func AppendBatchHeader(dst []byte, h BatchHeader, recs []Record) ([]byte, error) {
	if c := h.Compression(); c != None {
		return dst, errorf(ErrUnsupportedCompression, "cannot encode records with %s", c)
	}
	if h.LastOffsetDelta < 0 {
		return dst, errorf(ErrInvalidBatch, "negative last offset delta %d", h.LastOffsetDelta)
	}
	e := encoder{h: &h}
	size, _, err := e.measure(recs)
	if err != nil {
		return dst, err
	}
	return e.append(dst, recs, size), nil
}

// encoder writes the records of a batch in two passes: measure checks them
// and sizes the batch, append writes it into a buffer grown once.
type encoder struct {
	h *BatchHeader
	// assign is AppendBatch's mode: offset deltas are record indexes and
	// zero timestamps are now. Otherwise both come from the records.
	assign bool
	now    int64
}

// recordTime returns r's timestamp in ms; with assign a zero one is now.
func recordTime(r *Record, assign bool, now int64) int64 {
	if assign && r.Timestamp.IsZero() {
		return now
	}
	return r.Timestamp.UnixMilli()
}

// deltas returns the offset and timestamp deltas of the i-th record r, and
// its timestamp.
func (e *encoder) deltas(i int, r *Record) (offDelta int64, tsDelta, ts int64) {
	offDelta = int64(i)
	if !e.assign {
		offDelta = r.Offset - e.h.BaseOffset
	}
	ts = recordTime(r, e.assign, e.now)
	return offDelta, ts - e.h.BaseTimestamp, ts
}

// measure checks recs and returns the size of their encoding and their
// largest timestamp.
func (e *encoder) measure(recs []Record) (size, maxTs int64, err error) {
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
		body := bodySize(r, int32(off), tsDelta)
		if body > maxLength {
			return 0, 0, errorf(ErrInvalidBatch, "record %d: %d bytes, at most %d", i, body, maxLength)
		}
		size += int64(SizeVarint(int32(body))) + body
	}
	if total := minLength + size; total > maxLength {
		return 0, 0, errorf(ErrInvalidBatch, "batch length %d, at most %d", total, maxLength)
	}
	return size, maxTs, nil
}

// bodySize returns the size of r's encoding after its length varint. A
// field longer than the format allows (a header takes 2 bytes or more, so
// too many headers too) makes it exceed maxLength.
func bodySize(r *Record, offDelta int32, tsDelta int64) int64 {
	n := int64(1 + SizeVarlong(tsDelta) + SizeVarint(offDelta))
	n += bytesSize(r.Key) + bytesSize(r.Value) + int64(SizeVarint(int32(len(r.Headers))))
	for i := range r.Headers {
		hd := &r.Headers[i]
		n += int64(SizeVarint(int32(len(hd.Key))) + len(hd.Key))
		n += bytesSize(hd.Value)
	}
	return n
}

// bytesSize returns the size of b with its length varint; nil is length -1.
func bytesSize(b []byte) int64 {
	if b == nil {
		return 1
	}
	return int64(SizeVarint(int32(len(b)))) + int64(len(b))
}

// append writes the header and the records measured at size bytes to dst.
func (e *encoder) append(dst []byte, recs []Record, size int64) []byte {
	h := e.h
	h.Magic = Magic
	h.Length = int32(minLength + size)
	h.NumRecords = int32(len(recs))
	start := len(dst)
	dst = slices.Grow(dst, BatchHeaderSize+int(size))
	dst = appendHeader(dst, h)
	for i := range recs {
		r := &recs[i]
		off, tsDelta, _ := e.deltas(i, r)
		dst = AppendVarint(dst, int32(bodySize(r, int32(off), tsDelta)))
		dst = append(dst, 0) // attributes
		dst = AppendVarlong(dst, tsDelta)
		dst = AppendVarint(dst, int32(off))
		dst = appendBytes(dst, r.Key)
		dst = appendBytes(dst, r.Value)
		dst = AppendVarint(dst, int32(len(r.Headers)))
		for j := range r.Headers {
			hd := &r.Headers[j]
			dst = AppendVarint(dst, int32(len(hd.Key)))
			dst = append(dst, hd.Key...)
			dst = appendBytes(dst, hd.Value)
		}
	}
	b := dst[start:]
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
	return dst
}

// appendHeader appends h's 61 bytes, its CRC field as it is.
func appendHeader(dst []byte, h *BatchHeader) []byte {
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

// appendBytes appends b with its varint length, -1 for nil.
func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return append(dst, 0x01) // zig-zag -1
	}
	dst = AppendVarint(dst, int32(len(b)))
	return append(dst, b...)
}
