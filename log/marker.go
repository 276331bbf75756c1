package log

import (
	"encoding/binary"
	"time"
)

// EndTxnMarkerSize is the size of the value of a transaction marker of
// version 0: int16 version, int32 coordinator epoch.
const EndTxnMarkerSize = 6

// MarkerOptions are the fields of a transaction marker batch that
// [EncodeControlBatch] writes.
type MarkerOptions struct {
	// BaseOffset is the marker's offset (usually 0: the partition stamps
	// the real one with [SetBaseOffset]).
	BaseOffset int64
	// Now is the marker's timestamp, in milliseconds since the Unix epoch.
	Now int64
	// ProducerID and ProducerEpoch are those of the producer whose
	// transaction the marker ends.
	ProducerID    int64
	ProducerEpoch int16
	// CoordinatorEpoch is the epoch of the transaction coordinator that
	// wrote the marker.
	CoordinatorEpoch int32
}

// EncodeControlBatch appends to dst a control batch holding one
// transaction marker of type t, [ControlCommit] or [ControlAbort], and
// returns the extended slice. The batch is laid out as Kafka's
// MemoryRecords.withEndTransactionMarker writes it: attributes
// transactional and control, CreateTime, no compression, the producer id
// and epoch of o, base sequence -1, partition leader epoch -1, one record
// at offset delta 0 stamped o.Now whose key is version 0 and t (see
// [ParseControlKey]) and whose value is version 0 and o.CoordinatorEpoch
// (Kafka's EndTransactionMarker, see [ParseEndTxnMarker]). Another type,
// or a negative producer id or epoch, fails with [ErrInvalidBatch] and
// returns dst.
func EncodeControlBatch(dst []byte, t ControlType, o MarkerOptions) ([]byte, error) {
	if t != ControlCommit && t != ControlAbort {
		return dst, errorf(ErrInvalidBatch, "control type %v, want COMMIT or ABORT", t)
	}
	if o.ProducerID < 0 || o.ProducerEpoch < 0 {
		return dst, errorf(ErrInvalidBatch, "marker for producer %d epoch %d, want both 0 or more", o.ProducerID, o.ProducerEpoch)
	}
	var key [4]byte
	binary.BigEndian.PutUint16(key[2:], uint16(t))
	var value [EndTxnMarkerSize]byte
	binary.BigEndian.PutUint32(value[2:], uint32(o.CoordinatorEpoch))
	h := BatchHeader{
		BaseOffset:           o.BaseOffset,
		PartitionLeaderEpoch: -1,
		Attributes:           AttrTransactional | AttrControl,
		BaseTimestamp:        o.Now,
		MaxTimestamp:         o.Now,
		ProducerID:           o.ProducerID,
		ProducerEpoch:        o.ProducerEpoch,
		BaseSequence:         -1,
	}
	rec := [1]Record{{Offset: o.BaseOffset, Timestamp: time.UnixMilli(o.Now), Key: key[:], Value: value[:]}}
	return EncodeBatchWithHeader(dst, h, rec[:])
}

// ParseEndTxnMarker returns the coordinator epoch in the value of a
// transaction marker (a COMMIT or ABORT control record): int16 version,
// int32 coordinator epoch. As in Kafka's EndTransactionMarker, a value
// shorter than that or with a negative version fails with [ErrCorrupt],
// and a later version is read as version 0.
func ParseEndTxnMarker(value []byte) (coordinatorEpoch int32, err error) {
	if len(value) < EndTxnMarkerSize {
		return 0, errorf(ErrCorrupt, "transaction marker value of %d bytes, want %d", len(value), EndTxnMarkerSize)
	}
	if v := int16(binary.BigEndian.Uint16(value)); v < 0 {
		return 0, errorf(ErrCorrupt, "transaction marker value version %d, want 0 or more", v)
	}
	return int32(binary.BigEndian.Uint32(value[2:])), nil
}

// ParseControlBatch reads the control batch b, whose header h the caller
// has read: the type of its first record (see [ParseControlKey]) and, for
// a [ControlCommit] or [ControlAbort] marker, the coordinator epoch in its
// value (see [ParseEndTxnMarker]), as Kafka reads a batch's marker
// (ControlRecordType.parse and EndTransactionMarker.deserialize of the
// batch's first record, clients/src/main/java/org/apache/kafka/common/record/).
// A batch without records, which compaction leaves once a transaction's
// records are all gone, returns ok false and no error. A compressed batch
// is read with d; a nil d refuses it with [ErrUnsupportedCompression]. A
// record that does not read, or a key or marker value that does not
// parse, is the iterator's or the parser's error.
func ParseControlBatch(d *Decoder, b []byte, h BatchHeader) (t ControlType, coordinatorEpoch int32, ok bool, err error) {
	if h.NumRecords == 0 {
		return 0, 0, false, nil
	}
	var it RecordIter
	if d != nil {
		it, err = d.Iter(b, h)
	} else {
		it, err = NewRecordIterHeader(b, h)
	}
	if err != nil {
		return 0, 0, false, err
	}
	var r Record
	if !it.Next(&r) {
		return 0, 0, false, it.Err()
	}
	if t, err = ParseControlKey(r.Key); err != nil {
		return 0, 0, false, err
	}
	if t == ControlCommit || t == ControlAbort {
		if coordinatorEpoch, err = ParseEndTxnMarker(r.Value); err != nil {
			return 0, 0, false, err
		}
	}
	return t, coordinatorEpoch, true, nil
}
