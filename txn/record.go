package txn

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/stratalog/strata/internal/wire"
)

// Errors of the record format. Match them with errors.Is.
var (
	// ErrBadRecord means a __transaction_state record is malformed.
	ErrBadRecord = errors.New("txn: malformed transaction state record")
	// ErrNotTxnRecord means a well-formed key of another coordinator
	// record type, which a replay skips.
	ErrNotTxnRecord = errors.New("txn: not a transaction state record")
)

// keyType is the coordinator record type of TransactionLogKey, written as
// the key's first int16.
const keyType = 0

// valueVersion is the TransactionLogValue version AppendValue writes.
const valueVersion = 0

// MaxIDLen is the longest transactional id the format holds: its length
// is an int16.
const MaxIDLen = math.MaxInt16

// Partition names one partition of a topic in a transaction.
type Partition struct {
	Topic     string
	Partition int32
}

// Compare orders partitions by topic, then number.
func (p Partition) Compare(q Partition) int {
	if c := cmp.Compare(p.Topic, q.Topic); c != 0 {
		return c
	}
	return cmp.Compare(p.Partition, q.Partition)
}

// Metadata is the state of one transactional id: what its record says.
type Metadata struct {
	ProducerID    int64
	ProducerEpoch int16
	Timeout       time.Duration // stored in whole milliseconds
	State         State
	// Partitions are those the transaction wrote to, sorted (Compare) and
	// without duplicates; none for Empty.
	Partitions []Partition
	LastUpdate time.Time // stored in milliseconds
	Start      time.Time // of the transaction; stored in milliseconds
	// PreviousProducerID and NextProducerID are version 1's tagged
	// fields, -1 when absent; version 0 has neither (Decode sets -1).
	PreviousProducerID int64
	NextProducerID     int64
}

// AppendKey appends the key of transactional id to dst and returns the
// extended slice. It panics if id is longer than MaxIDLen bytes; the store
// checks ids before it encodes.
func AppendKey(dst []byte, id string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, keyType)
	return appendString(dst, id)
}

// AppendValue appends m as a version 0 value to dst and returns the
// extended slice. Empty is written with a null partition list, as Kafka
// writes it. It panics if a topic name is longer than MaxIDLen bytes.
func AppendValue(dst []byte, m Metadata) []byte {
	dst = binary.BigEndian.AppendUint16(dst, valueVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(m.ProducerID))
	dst = binary.BigEndian.AppendUint16(dst, uint16(m.ProducerEpoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(int32(min(m.Timeout.Milliseconds(), math.MaxInt32))))
	dst = append(dst, byte(m.State))
	if m.State == Empty {
		dst = binary.BigEndian.AppendUint32(dst, math.MaxUint32) // null
	} else {
		dst = appendPartitions(dst, m.Partitions)
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(m.LastUpdate.UnixMilli()))
	return binary.BigEndian.AppendUint64(dst, uint64(m.Start.UnixMilli()))
}

// appendPartitions appends ps grouped by topic, in order: the array of
// (topic, [partition]) of version 0.
func appendPartitions(dst []byte, ps []Partition) []byte {
	countAt := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, 0)
	topics := 0
	for i := 0; i < len(ps); {
		j := i
		for j < len(ps) && ps[j].Topic == ps[i].Topic {
			j++
		}
		dst = appendString(dst, ps[i].Topic)
		dst = binary.BigEndian.AppendUint32(dst, uint32(j-i))
		for _, p := range ps[i:j] {
			dst = binary.BigEndian.AppendUint32(dst, uint32(p.Partition))
		}
		topics++
		i = j
	}
	binary.BigEndian.PutUint32(dst[countAt:], uint32(topics))
	return dst
}

// appendString appends s as an int16 length and its bytes.
func appendString(dst []byte, s string) []byte {
	if len(s) > MaxIDLen {
		panic(fmt.Sprintf("txn: string of %d bytes does not fit the record format", len(s)))
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

// Decode decodes a __transaction_state record: the transactional id and,
// unless value is nil (a tombstone: deleted is true), its metadata, with
// Partitions sorted and without duplicates and times in UTC. It returns
// an error wrapping ErrNotTxnRecord for a key of another record type and
// ErrBadRecord for anything malformed; it never panics. The strings of
// the result are copies.
func Decode(key, value []byte) (id string, m Metadata, deleted bool, err error) {
	r := wire.NewReader(key)
	typ := r.Int16()
	if r.Bad() {
		return "", Metadata{}, false, fmt.Errorf("txn: key of %d bytes: %w", len(key), ErrBadRecord)
	}
	if typ != keyType {
		if typ < 0 {
			return "", Metadata{}, false, fmt.Errorf("txn: key type %d: %w", typ, ErrBadRecord)
		}
		return "", Metadata{}, false, fmt.Errorf("txn: key type %d: %w", typ, ErrNotTxnRecord)
	}
	id = r.Str()
	if r.Bad() || r.Len() != 0 {
		return "", Metadata{}, false, fmt.Errorf("txn: key of %d bytes: %w", len(key), ErrBadRecord)
	}
	if value == nil {
		return id, Metadata{}, true, nil
	}
	m, err = decodeValue(value)
	if err != nil {
		return "", Metadata{}, false, err
	}
	return id, m, false, nil
}

// decodeValue decodes a TransactionLogValue of version 0 or 1.
func decodeValue(value []byte) (Metadata, error) {
	r := wire.NewReader(value)
	version := r.Int16()
	if !r.Bad() && (version < 0 || version > 1) {
		return Metadata{}, fmt.Errorf("txn: value version %d: %w", version, ErrBadRecord)
	}
	flexible := version == 1
	m := Metadata{PreviousProducerID: -1, NextProducerID: -1}
	m.ProducerID = r.Int64()
	m.ProducerEpoch = r.Int16()
	timeout := r.Int32()
	m.Timeout = time.Duration(timeout) * time.Millisecond
	m.State = State(r.Int8())
	var topics int
	if flexible {
		topics = r.Uvarint() - 1
	} else {
		topics = int(r.Int32())
	}
	for i := 0; i < topics && !r.Bad(); i++ {
		var (
			topic string
			n     int
		)
		if flexible {
			topic = r.CompactStr()
			n = r.Uvarint() - 1
		} else {
			topic = r.Str()
			n = int(r.Int32())
		}
		if n < 0 || n > r.Len()/4 {
			r.Fail()
			break
		}
		for range n {
			m.Partitions = append(m.Partitions, Partition{Topic: topic, Partition: r.Int32()})
		}
		if flexible {
			r.TaggedFields(func(int, []byte) bool { return true })
		}
	}
	m.LastUpdate = time.UnixMilli(r.Int64()).UTC()
	m.Start = time.UnixMilli(r.Int64()).UTC()
	if flexible {
		r.TaggedFields(func(tag int, field []byte) bool {
			switch tag {
			case 0, 1:
				if len(field) != 8 {
					return false
				}
				v := int64(binary.BigEndian.Uint64(field))
				if tag == 0 {
					m.PreviousProducerID = v
				} else {
					m.NextProducerID = v
				}
			}
			return true
		})
	}
	switch {
	case r.Bad() || r.Len() != 0:
		return Metadata{}, fmt.Errorf("txn: value version %d of %d bytes: %w", version, len(value), ErrBadRecord)
	case !m.State.Valid():
		return Metadata{}, fmt.Errorf("txn: status %d: %w", m.State, ErrBadRecord)
	case m.ProducerID < 0 || m.ProducerEpoch < 0 || timeout < 0:
		return Metadata{}, fmt.Errorf("txn: producer id %d, epoch %d, timeout %d ms: %w", m.ProducerID, m.ProducerEpoch, timeout, ErrBadRecord)
	case topics < -1:
		return Metadata{}, fmt.Errorf("txn: %d topics: %w", topics, ErrBadRecord)
	}
	for _, p := range m.Partitions {
		if p.Partition < 0 {
			return Metadata{}, fmt.Errorf("txn: partition %d of %q: %w", p.Partition, p.Topic, ErrBadRecord)
		}
	}
	if m.State == Empty {
		m.Partitions = nil
	}
	slices.SortFunc(m.Partitions, Partition.Compare)
	m.Partitions = slices.Compact(m.Partitions)
	return m, nil
}
