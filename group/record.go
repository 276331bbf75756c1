package group

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/stratalog/strata/internal/wire"
)

// The record format is described in the package documentation (doc.go),
// under "The __consumer_offsets format".

// Record versions written by the encoders.
const (
	keyVersion     = 1 // OffsetCommitKey
	valueVersion   = 3 // OffsetCommitValue with a leader epoch
	valueVersionID = 4 // the flexible version, for a value with a topic id (a tagged field)
)

// topicIDTag is the tag of OffsetCommitValue's TopicId field (Kafka 4.1,
// KAFKA-19141).
const topicIDTag = 0

// maxStringLen is the longest string the format can hold: its length is
// an int16.
const maxStringLen = math.MaxInt16

// AppendKey appends the __consumer_offsets key of (group, topic,
// partition), version 1, to dst and returns the extended slice. It panics
// if group or topic is longer than 32767 bytes or partition does not fit
// in an int32; the [Coordinator] checks both before it encodes.
func AppendKey(dst []byte, group, topic string, partition int) []byte {
	if partition < 0 || partition > math.MaxInt32 {
		panic(fmt.Sprintf("group: partition %d does not fit the record format", partition))
	}
	dst = binary.BigEndian.AppendUint16(dst, keyVersion)
	dst = appendString(dst, group)
	dst = appendString(dst, topic)
	return binary.BigEndian.AppendUint32(dst, uint32(partition))
}

// AppendValue appends the __consumer_offsets value of om to dst and
// returns the extended slice: version 3, or, when om has a TopicID,
// version 4 with the id in its tagged field 0, as Kafka 4.1 writes it. The
// commit time is stored in whole milliseconds; the leader epoch as -1. It
// panics if om.Metadata is longer than 32767 bytes; the [Coordinator]
// checks it before it encodes.
func AppendValue(dst []byte, om OffsetAndMetadata) []byte {
	if om.TopicID == ([16]byte{}) {
		dst = binary.BigEndian.AppendUint16(dst, valueVersion)
		dst = binary.BigEndian.AppendUint64(dst, uint64(om.Offset))
		dst = binary.BigEndian.AppendUint32(dst, math.MaxUint32) // leader epoch -1
		dst = appendString(dst, om.Metadata)
		return binary.BigEndian.AppendUint64(dst, uint64(om.CommitTime.UnixMilli()))
	}
	if len(om.Metadata) > maxStringLen {
		panic(fmt.Sprintf("group: string of %d bytes does not fit the record format", len(om.Metadata)))
	}
	dst = binary.BigEndian.AppendUint16(dst, valueVersionID)
	dst = binary.BigEndian.AppendUint64(dst, uint64(om.Offset))
	dst = binary.BigEndian.AppendUint32(dst, math.MaxUint32) // leader epoch -1
	dst = binary.AppendUvarint(dst, uint64(len(om.Metadata))+1)
	dst = append(dst, om.Metadata...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(om.CommitTime.UnixMilli()))
	dst = binary.AppendUvarint(dst, 1) // one tagged field
	dst = binary.AppendUvarint(dst, topicIDTag)
	dst = binary.AppendUvarint(dst, uint64(len(om.TopicID)))
	return append(dst, om.TopicID[:]...)
}

// EncodeCommit returns the record for c: its key and, unless c is a
// tombstone (c.Deleted), its value. A tombstone's value is nil, which the
// log writes as a null value. It panics where [AppendKey] and
// [AppendValue] do.
func EncodeCommit(c Commit) (key, value []byte) {
	key = AppendKey(make([]byte, 0, 10+len(c.Group)+len(c.Topic)), c.Group, c.Topic, c.Partition)
	if c.Deleted {
		return key, nil
	}
	value = AppendValue(make([]byte, 0, 45+len(c.Metadata)), c.OffsetAndMetadata())
	return key, value
}

// appendString appends s as an int16 length and its bytes.
func appendString(dst []byte, s string) []byte {
	if len(s) > maxStringLen {
		panic(fmt.Sprintf("group: string of %d bytes does not fit the record format", len(s)))
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

// DecodeCommit decodes a __consumer_offsets record. A nil value is a
// tombstone: the result has Deleted set and no offset. An empty non-nil
// value is malformed. CommitTime is in UTC.
//
// It returns an error wrapping [ErrNotOffsetCommit] for a well-formed key
// of another record type (which a replay skips) and [ErrBadRecord] for
// anything malformed; it never panics. The strings of the result are
// copies: key and value may be reused afterwards.
func DecodeCommit(key, value []byte) (Commit, error) {
	r := wire.NewReader(key)
	version := r.Int16()
	if r.Bad() {
		return Commit{}, fmt.Errorf("group: key of %d bytes: %w", len(key), ErrBadRecord)
	}
	if version != 0 && version != 1 {
		if version < 0 {
			return Commit{}, fmt.Errorf("group: key version %d: %w", version, ErrBadRecord)
		}
		return Commit{}, fmt.Errorf("group: key version %d: %w", version, ErrNotOffsetCommit)
	}
	var c Commit
	c.Group = r.Str()
	c.Topic = r.Str()
	c.Partition = int(r.Int32())
	if r.Bad() || r.Len() != 0 || c.Partition < 0 {
		return Commit{}, fmt.Errorf("group: offset commit key of %d bytes: %w", len(key), ErrBadRecord)
	}
	if value == nil {
		c.Deleted = true
		return c, nil
	}
	if err := decodeValue(&c, value); err != nil {
		return Commit{}, err
	}
	return c, nil
}

// decodeValue decodes an OffsetCommitValue of any version into c.
func decodeValue(c *Commit, value []byte) error {
	r := wire.NewReader(value)
	version := r.Int16()
	c.Offset = r.Int64()
	if version >= 3 {
		r.Int32() // leader epoch
	}
	switch {
	case version >= 4:
		c.Metadata = r.CompactStr()
	default:
		c.Metadata = r.Str()
	}
	c.CommitTime = time.UnixMilli(r.Int64()).UTC()
	switch version {
	case 1:
		r.Int64() // expire timestamp
	case 4:
		r.TaggedFields(func(tag int, field []byte) bool {
			if tag != topicIDTag {
				return true // a field of a later Kafka: skipped
			}
			if len(field) != len(c.TopicID) {
				return false
			}
			copy(c.TopicID[:], field)
			return true
		})
	}
	switch {
	case version < 0 || version > 4:
		return fmt.Errorf("group: offset commit value version %d: %w", version, ErrBadRecord)
	case r.Bad() || r.Len() != 0:
		return fmt.Errorf("group: offset commit value version %d of %d bytes: %w", version, len(value), ErrBadRecord)
	}
	return nil
}
