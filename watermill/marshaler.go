package watermill

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stratalog/strata"
)

// UUIDHeaderKey is the record header that carries a message's UUID, the
// one watermill-kafka uses (pkg/kafka/marshaler.go).
const UUIDHeaderKey = "_watermill_message_uuid"

// Marshaler turns a Watermill message into the record a [Publisher]
// appends to topic.
type Marshaler interface {
	Marshal(topic string, msg *message.Message) (strata.Record, error)
}

// Unmarshaler turns a record a [Subscriber] read into a Watermill message.
// The record's bytes are the unmarshaler's to keep.
type Unmarshaler interface {
	Unmarshal(rec strata.Message) (*message.Message, error)
}

// MarshalerUnmarshaler is both.
type MarshalerUnmarshaler interface {
	Marshaler
	Unmarshaler
}

// DefaultMarshaler writes a message as watermill-kafka's DefaultMarshaler
// does: the payload as the value, no key, the UUID in the header
// [UUIDHeaderKey] and every metadata entry as a header (in key order, so
// that equal messages make equal records). It reads any record back the
// same way: the UUID header is the UUID, every other header a metadata
// entry (the last one of a name wins).
type DefaultMarshaler struct{}

// Marshal returns msg as a record. Metadata named [UUIDHeaderKey] is
// refused: the name is reserved for the UUID.
func (DefaultMarshaler) Marshal(_ string, msg *message.Message) (strata.Record, error) {
	if _, ok := msg.Metadata[UUIDHeaderKey]; ok {
		return strata.Record{}, fmt.Errorf("watermill: metadata %q is reserved for the message UUID", UUIDHeaderKey)
	}
	headers := make([]strata.Header, 0, 1+len(msg.Metadata))
	headers = append(headers, strata.Header{Key: UUIDHeaderKey, Value: []byte(msg.UUID)})
	for _, k := range slices.Sorted(maps.Keys(msg.Metadata)) {
		headers = append(headers, strata.Header{Key: k, Value: []byte(msg.Metadata[k])})
	}
	value := msg.Payload
	if value == nil {
		// A nil value is a tombstone, which compaction removes: an empty
		// payload is an empty value.
		value = []byte{}
	}
	return strata.Record{Value: value, Headers: headers}, nil
}

// Unmarshal returns the message a record holds.
func (DefaultMarshaler) Unmarshal(rec strata.Message) (*message.Message, error) {
	var id string
	md := make(message.Metadata, len(rec.Headers))
	for _, h := range rec.Headers {
		if h.Key == UUIDHeaderKey {
			id = string(h.Value)
			continue
		}
		md[h.Key] = string(h.Value)
	}
	msg := message.NewMessage(id, rec.Value)
	msg.Metadata = md
	return msg, nil
}

// GeneratePartitionKey returns the key a message's record gets; its
// partition is then murmur2(key) modulo the topic's partitions, as Kafka's
// producer and watermill-kafka place a keyed message.
type GeneratePartitionKey func(topic string, msg *message.Message) (string, error)

// NewWithPartitioningMarshaler returns a marshaler that writes as
// [DefaultMarshaler] does, with the key generatePartitionKey gives, as
// watermill-kafka's marshaler of the same name does: messages with one key
// go to one partition, in the order they were published. An empty key is
// a key too (all such messages share a partition).
func NewWithPartitioningMarshaler(generatePartitionKey GeneratePartitionKey) MarshalerUnmarshaler {
	return partitioningMarshaler{key: generatePartitionKey}
}

type partitioningMarshaler struct {
	DefaultMarshaler
	key GeneratePartitionKey
}

func (m partitioningMarshaler) Marshal(topic string, msg *message.Message) (strata.Record, error) {
	rec, err := m.DefaultMarshaler.Marshal(topic, msg)
	if err != nil {
		return rec, err
	}
	key, err := m.key(topic, msg)
	if err != nil {
		return strata.Record{}, fmt.Errorf("watermill: generating the partition key of message %s: %w", msg.UUID, err)
	}
	rec.Key = []byte(key)
	return rec, nil
}

// cloneRecord copies a record's bytes, for a record that aliases a
// buffer its reader will reuse.
func cloneRecord(r strata.Record) strata.Record {
	r.Key = bytes.Clone(r.Key)
	r.Value = bytes.Clone(r.Value)
	hs := make([]strata.Header, len(r.Headers))
	for i, h := range r.Headers {
		hs[i] = strata.Header{Key: h.Key, Value: bytes.Clone(h.Value)}
	}
	r.Headers = hs
	return r
}
