package log

import (
	"encoding/binary"
	"hash/crc32"
)

// Kafka's message sets before RecordBatch v2 (magic 0 and 1) share the
// first 12 bytes of a batch — an int64 offset and an int32 length of what
// follows — and keep their magic at byte 16, as v2 does, so a log that
// mixes them can be walked entry by entry:
//
//	offset size field       meaning
//	     0    8 offset      the message's offset; in a compressed wrapper,
//	                        the offset of its last inner message
//	     8    4 length      entry size - 12
//	    12    4 crc         CRC-32 (IEEE) of [16, end)
//	    16    1 magic       0 or 1
//	    17    1 attributes  bits 0-2 codec, bit 3 (magic 1) LogAppendTime
//	    18    8 timestamp   magic 1 only
//	     …      key, value  int32 length (-1 for null) and bytes, each
//
// This package reads their headers, so that a log Kafka wrote before 0.11
// is scanned, checked (CRC), indexed and kept, but not their records:
// iterating one is ErrUnsupportedFormat.

// PrefixSize is the number of bytes every entry of a log starts with and
// that tell its format and size: offset, length, and the magic at byte 16.
const PrefixSize = 17

// Sizes of legacy message headers (everything before the key), and the
// smallest length field each can have: a header after the length field and
// two null lengths.
const (
	legacyHeaderV0 = 18
	legacyHeaderV1 = 26
	legacyMinLenV0 = 14
	legacyMinLenV1 = 22
	legacyAttrMask = 0x0f // codec and timestamp type; the other bits are unused
)

var ieee = crc32.IEEETable

// headerSize returns how many bytes the header of an entry of this magic
// takes, and false for a magic that is not 0, 1 or 2.
func headerSize(magic byte) (int, bool) {
	switch magic {
	case 0:
		return legacyHeaderV0, true
	case 1:
		return legacyHeaderV1, true
	case Magic:
		return BatchHeaderSize, true
	}
	return 0, false
}

// readLegacy decodes the header of a magic 0 or 1 message, which b holds
// (headerSize bytes at least), as a BatchHeader: one record at BaseOffset
// (for a compressed wrapper, the offset of its last inner message), no
// producer, its timestamp (magic 1) as BaseTimestamp and MaxTimestamp.
func readLegacy(b []byte) (BatchHeader, error) {
	be := binary.BigEndian
	h := BatchHeader{
		BaseOffset:           int64(be.Uint64(b)),
		Length:               int32(be.Uint32(b[offLength:])),
		PartitionLeaderEpoch: -1,
		Magic:                int8(b[offMagic]),
		CRC:                  be.Uint32(b[lengthOverhead:]),
		Attributes:           int16(b[offMagic+1] & legacyAttrMask),
		BaseTimestamp:        -1,
		MaxTimestamp:         -1,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		BaseSequence:         -1,
		NumRecords:           1,
	}
	minLen := int32(legacyMinLenV0)
	if h.Magic == 1 {
		minLen = legacyMinLenV1
		h.BaseTimestamp = int64(be.Uint64(b[offMagic+2:]))
		h.MaxTimestamp = h.BaseTimestamp
	} else {
		h.Attributes &^= AttrLogAppendTime
	}
	switch {
	case h.BaseOffset < 0:
		return h, errorf(ErrCorrupt, "legacy message (magic %d) at negative offset %d", h.Magic, h.BaseOffset)
	case h.Length < minLen || h.Length > maxLength:
		return h, errorf(ErrCorrupt, "legacy message (magic %d) length %d out of range [%d, %d]", h.Magic, h.Length, minLen, maxLength)
	}
	return h, nil
}

// IsLegacy reports whether the entry is a message of the formats before
// RecordBatch v2 (magic 0 or 1).
func (h BatchHeader) IsLegacy() bool { return h.Magic < Magic }

// checkLegacyCRC checks the CRC-32 of a whole legacy message.
func checkLegacyCRC(b []byte, h BatchHeader) error {
	if crc := crc32.Checksum(b[offMagic:h.Size()], ieee); crc != h.CRC {
		return errorf(ErrCorrupt, "legacy message (magic %d) crc %#08x, computed %#08x", h.Magic, h.CRC, crc)
	}
	return nil
}
