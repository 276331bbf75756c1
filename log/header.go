package log

import (
	"encoding/binary"
	"hash/crc32"
	"math"
)

// BatchHeaderSize is the size of a batch header, in bytes: the records start
// right after it.
const BatchHeaderSize = 61

// Magic is the batch format version this package reads and writes.
const Magic = 2

// Bits of [BatchHeader].Attributes. Only the low byte is used; the others are
// kept as they are.
const (
	AttrCompressionMask = 0x07 // compression codec, a Compression
	AttrLogAppendTime   = 0x08 // timestamp type: set for LogAppendTime
	AttrTransactional   = 0x10 // the batch belongs to a transaction
	AttrControl         = 0x20 // the batch holds control records (transaction markers)
	AttrDeleteHorizon   = 0x40 // BaseTimestamp holds the compaction delete horizon
)

// Byte offsets of the header fields.
const (
	offLength        = 8
	offLeaderEpoch   = 12
	offMagic         = 16
	offCRC           = 17
	offAttributes    = 21 // the CRC covers [offAttributes, end of batch)
	offLastDelta     = 23
	offBaseTimestamp = 27
	offMaxTimestamp  = 35
	offProducerID    = 43
	offProducerEpoch = 51
	offBaseSequence  = 53
	offNumRecords    = 57

	// lengthOverhead is what precedes the Length field's span: baseOffset
	// and Length itself.
	lengthOverhead = 12
	minLength      = BatchHeaderSize - lengthOverhead
	maxLength      = math.MaxInt32 - lengthOverhead // so Size fits an int32

	// minRecordBody is the smallest record after its length varint:
	// attributes, and one byte each for timestampDelta, offsetDelta, key
	// length, value length and header count.
	minRecordBody = 6
	minRecordSize = 1 + minRecordBody
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// BatchHeader is the decoded 61-byte header of a batch. Field order and
// widths are those on disk.
type BatchHeader struct {
	BaseOffset           int64  // offset of the first record
	Length               int32  // bytes after this field: Size() - 12
	PartitionLeaderEpoch int32  // -1 for none; outside the CRC
	Magic                int8   // 2; 0 or 1 for a legacy message (see IsLegacy)
	CRC                  uint32 // CRC-32C of [21, Size()); a legacy message's is CRC-32 of [16, Size())
	Attributes           int16  // the Attr* bits
	LastOffsetDelta      int32  // last offset - BaseOffset
	BaseTimestamp        int64  // first record's timestamp, or the delete horizon
	MaxTimestamp         int64  // max record timestamp, or the log append time
	ProducerID           int64  // -1 for none
	ProducerEpoch        int16  // -1 for none
	BaseSequence         int32  // -1 for none
	NumRecords           int32  // number of records
}

// LastOffset returns the offset of the batch's last record (even when
// compaction has removed that record).
func (h BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset returns the offset that follows the batch: LastOffset() + 1.
func (h BatchHeader) NextOffset() int64 { return h.LastOffset() + 1 }

// Size returns the size of the whole batch in bytes, header included.
func (h BatchHeader) Size() int { return lengthOverhead + int(h.Length) }

// Compression returns the batch's compression codec.
func (h BatchHeader) Compression() Compression {
	return Compression(h.Attributes & AttrCompressionMask)
}

// TimestampType returns the batch's timestamp type.
func (h BatchHeader) TimestampType() TimestampType {
	if h.Attributes&AttrLogAppendTime != 0 {
		return LogAppendTime
	}
	return CreateTime
}

// IsTransactional reports whether the batch belongs to a transaction.
func (h BatchHeader) IsTransactional() bool { return h.Attributes&AttrTransactional != 0 }

// IsControl reports whether the batch holds control records.
func (h BatchHeader) IsControl() bool { return h.Attributes&AttrControl != 0 }

// HasDeleteHorizon reports whether BaseTimestamp holds a delete horizon.
func (h BatchHeader) HasDeleteHorizon() bool { return h.Attributes&AttrDeleteHorizon != 0 }

// ReadHeader decodes the header of the entry at the start of b: a
// RecordBatch v2 header, or that of a message of the formats before it
// (magic 0 or 1; see IsLegacy), which it describes in the same fields. It
// checks the header alone and needs only its bytes (61 for v2), not the
// whole batch: it verifies neither the CRC nor the records. It fails with
// [ErrIncomplete] if b is shorter than the header, and with [ErrCorrupt] if
// the magic is not 0, 1 or 2, Length is shorter than a header, NumRecords
// or LastOffsetDelta negative, or if NumRecords cannot fit in
// LastOffsetDelta+1 offsets or, uncompressed, in Length bytes. A codec this
// package does not know (attribute values 5 to 7) is not an error here:
// reading the records is ([ErrUnsupportedCompression]).
func ReadHeader(b []byte) (BatchHeader, error) {
	var h BatchHeader
	err := ReadHeaderInto(b, &h)
	return h, err
}

// ReadHeaderInto is ReadHeader that decodes into *h, for a caller that
// keeps the header in place rather than copy it: after an error *h is what
// ReadHeader would have returned with it.
func ReadHeaderInto(b []byte, h *BatchHeader) (err error) {
	if len(b) < PrefixSize {
		*h = BatchHeader{}
		return errorf(ErrIncomplete, "header needs %d bytes, have %d", PrefixSize, len(b))
	}
	need, ok := headerSize(b[offMagic])
	if !ok {
		*h = BatchHeader{}
		return errorf(ErrCorrupt, "magic %d, want 0, 1 or %d", int8(b[offMagic]), Magic)
	}
	if len(b) < need {
		*h = BatchHeader{}
		return errorf(ErrIncomplete, "header needs %d bytes, have %d", need, len(b))
	}
	if b[offMagic] != Magic {
		*h, err = readLegacy(b)
		return err
	}
	be := binary.BigEndian
	*h = BatchHeader{
		BaseOffset:           int64(be.Uint64(b)),
		Length:               int32(be.Uint32(b[offLength:])),
		PartitionLeaderEpoch: int32(be.Uint32(b[offLeaderEpoch:])),
		Magic:                int8(b[offMagic]),
		CRC:                  be.Uint32(b[offCRC:]),
		Attributes:           int16(be.Uint16(b[offAttributes:])),
		LastOffsetDelta:      int32(be.Uint32(b[offLastDelta:])),
		BaseTimestamp:        int64(be.Uint64(b[offBaseTimestamp:])),
		MaxTimestamp:         int64(be.Uint64(b[offMaxTimestamp:])),
		ProducerID:           int64(be.Uint64(b[offProducerID:])),
		ProducerEpoch:        int16(be.Uint16(b[offProducerEpoch:])),
		BaseSequence:         int32(be.Uint32(b[offBaseSequence:])),
		NumRecords:           int32(be.Uint32(b[offNumRecords:])),
	}
	if h.Length < minLength || h.Length > maxLength {
		return errorf(ErrCorrupt, "batch length %d out of range [%d, %d]", h.Length, minLength, maxLength)
	}
	return checkCounts(h)
}

// checkCounts checks the counts of a header read from disk, failing with
// ErrCorrupt.
func checkCounts(h *BatchHeader) error {
	switch c := h.Compression(); {
	case h.LastOffsetDelta < 0:
		return errorf(ErrCorrupt, "negative last offset delta %d", h.LastOffsetDelta)
	case h.NumRecords < 0:
		return errorf(ErrCorrupt, "negative record count %d", h.NumRecords)
	case int64(h.NumRecords) > int64(h.LastOffsetDelta)+1:
		return errorf(ErrCorrupt, "%d records cannot fit in last offset delta %d", h.NumRecords, h.LastOffsetDelta)
	case c == None && int64(h.NumRecords)*minRecordSize > int64(h.Length)-minLength:
		return errorf(ErrCorrupt, "%d records cannot fit in %d bytes", h.NumRecords, int64(h.Length)-minLength)
	}
	return nil
}

// CheckBatch checks the integrity of the entry at the start of b without
// parsing its records: the rules of [ReadHeader], then that the whole
// entry is present ([ErrIncomplete] otherwise) and that its checksum
// matches ([ErrCorrupt] otherwise): CRC-32C for a v2 batch, CRC-32 for a
// legacy message. A batch it accepts is valid data, even one this package
// cannot read (a legacy message, an unknown codec): it is the check for
// recovery, which must keep such batches. [Validate] also walks the
// records.
func CheckBatch(b []byte) (BatchHeader, error) {
	h, err := readWhole(b)
	if err != nil {
		return h, err
	}
	if h.IsLegacy() {
		return h, checkLegacyCRC(b, h)
	}
	if crc := crc32.Checksum(b[offAttributes:h.Size()], castagnoli); crc != h.CRC {
		return h, errorf(ErrCorrupt, "crc %#08x, computed %#08x", h.CRC, crc)
	}
	return h, nil
}

// readWhole is ReadHeader plus a check that the whole batch is in b.
func readWhole(b []byte) (BatchHeader, error) {
	h, err := ReadHeader(b)
	if err == nil && len(b) < h.Size() {
		err = errorf(ErrIncomplete, "batch needs %d bytes, have %d", h.Size(), len(b))
	}
	return h, err
}

// checkReadable fails for an entry whose records this package cannot
// iterate without a Decoder: a legacy message ([ErrUnsupportedFormat]) or a
// compressed batch ([ErrUnsupportedCompression]).
func checkReadable(h BatchHeader) error {
	if h.IsLegacy() {
		return errorf(ErrUnsupportedFormat, "legacy message set (magic %d) at offset %d", h.Magic, h.BaseOffset)
	}
	if c := h.Compression(); c != None {
		return errorf(ErrUnsupportedCompression, "batch compressed with %s", c)
	}
	return nil
}

// SetBaseOffset rewrites the base offset of the batch at the start of b.
// The base offset is outside the CRC, so the batch stays valid; record
// offsets, stored as deltas, move with it. b must hold at least 8 bytes.
func SetBaseOffset(b []byte, offset int64) {
	binary.BigEndian.PutUint64(b[:8], uint64(offset))
}

// SetPartitionLeaderEpoch rewrites the partition leader epoch of the batch at
// the start of b. The epoch is outside the CRC, so the batch stays valid. b
// must hold at least 16 bytes.
func SetPartitionLeaderEpoch(b []byte, epoch int32) {
	binary.BigEndian.PutUint32(b[offLeaderEpoch:offLeaderEpoch+4], uint32(epoch))
}

// PeekHeader reads the fields of the entry header at the start of b that
// a scan over batches needs (base offset, last offset, size in bytes),
// checking only that they are plausible: b holds a header, magic 0, 1 or
// 2, a length covering a header, a non-negative last offset delta. ok is
// false otherwise. It is the fast step of a scan; ReadHeader is the full
// check. A legacy message's base and last offsets are its offset.
func PeekHeader(b []byte) (base, last, size int64, ok bool) {
	if len(b) < PrefixSize {
		return 0, 0, 0, false
	}
	need, known := headerSize(b[offMagic])
	if !known || len(b) < need {
		return 0, 0, 0, false
	}
	be := binary.BigEndian
	length := int64(int32(be.Uint32(b[offLength:])))
	base = int64(be.Uint64(b))
	if b[offMagic] != Magic {
		if length < legacyMinLenV0 || base < 0 {
			return 0, 0, 0, false
		}
		return base, base, lengthOverhead + length, true
	}
	delta := int64(int32(be.Uint32(b[offLastDelta:])))
	if length < minLength || delta < 0 {
		return 0, 0, 0, false
	}
	return base, base + delta, lengthOverhead + length, true
}

// SetLogAppendTime stamps the whole batch b (a header and its records, as
// its length says; b must hold them) with the append time ts, as a broker
// does for a topic under LogAppendTime: the timestamp-type attribute and
// MaxTimestamp change, the records' own timestamps stay, and the CRC, which
// covers both fields, is recomputed.
func SetLogAppendTime(b []byte, ts int64) {
	be := binary.BigEndian
	size := lengthOverhead + int(int32(be.Uint32(b[offLength:])))
	be.PutUint16(b[offAttributes:], be.Uint16(b[offAttributes:])|uint16(AttrLogAppendTime))
	be.PutUint64(b[offMaxTimestamp:], uint64(ts))
	be.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:size], castagnoli))
}

// IncrementSequence returns the producer sequence delta (0 or more) after
// seq, wrapping past math.MaxInt32 to 0 as Kafka's
// DefaultRecordBatch.incrementSequence does
// (clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java):
// the last sequence of a batch is IncrementSequence(BaseSequence,
// LastOffsetDelta), and the next batch's base sequence the one after it.
func IncrementSequence(seq, delta int32) int32 {
	if seq > math.MaxInt32-delta {
		return delta - (math.MaxInt32 - seq) - 1
	}
	return seq + delta
}
