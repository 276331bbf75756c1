package group

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/stratalog/strata/internal/wire"
)

// Kafka's consumer protocol: the bytes a consumer group's members exchange
// through the coordinator, ConsumerProtocolSubscription and
// ConsumerProtocolAssignment (clients/src/main/resources/common/message),
// each an int16 version followed by the fields of that version:
//
//	Subscription  v0  topics []string, user_data nullable bytes
//	              v1  + owned_partitions [](topic string, partitions []int32)
//	              v2  + generation_id int32
//	              v3  + rack_id nullable string
//	Assignment    v0+ assigned_partitions [](topic string, partitions []int32),
//	                  user_data nullable bytes
//
// An array is an int32 count and its elements, bytes an int32 length
// (-1: null). A reader parses a version newer than it knows by the fields
// it knows and ignores the rest, as Kafka's ConsumerProtocol does.

// The versions the encoders write: 1, the version of Kafka 2.4's
// cooperative protocol, which every later client reads.
const (
	subscriptionVersion = 1
	assignmentVersion   = 1
)

// Subscription is a consumer's ConsumerProtocolSubscription.
type Subscription struct {
	Topics   []string
	UserData []byte
	// Owned are the partitions the consumer owned when it joined (v1 on).
	Owned []TopicPartition
	// Generation is the generation Owned is of (v2 on), -1 if unknown.
	Generation int32
	// RackID is the consumer's client.rack (v3 on), "" if none.
	RackID string
}

// AppendSubscription appends a ConsumerProtocolSubscription of version 1
// with topics and owned, and no user data, to dst. It panics if a topic
// is longer than 32767 bytes or a partition does not fit in an int32.
func AppendSubscription(dst []byte, topics []string, owned []TopicPartition) []byte {
	dst = binary.BigEndian.AppendUint16(dst, subscriptionVersion)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(topics)))
	for _, t := range topics {
		dst = appendString(dst, t)
	}
	dst = binary.BigEndian.AppendUint32(dst, math.MaxUint32) // user data null
	return appendTopicPartitions(dst, owned)
}

// AppendAssignment appends a ConsumerProtocolAssignment of version 1
// with parts, and no user data, to dst. It panics where
// [AppendSubscription] does.
func AppendAssignment(dst []byte, parts []TopicPartition) []byte {
	dst = binary.BigEndian.AppendUint16(dst, assignmentVersion)
	dst = appendTopicPartitions(dst, parts)
	return binary.BigEndian.AppendUint32(dst, math.MaxUint32) // user data null
}

// appendTopicPartitions appends parts grouped by topic, in order of first
// appearance, as an array of (topic, partitions).
func appendTopicPartitions(dst []byte, parts []TopicPartition) []byte {
	var topics []string
	for _, tp := range parts {
		if !slices.Contains(topics, tp.Topic) {
			topics = append(topics, tp.Topic)
		}
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(topics)))
	for _, t := range topics {
		dst = appendString(dst, t)
		n := 0
		for _, tp := range parts {
			if tp.Topic == t {
				n++
			}
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(n))
		for _, tp := range parts {
			if tp.Topic == t {
				if tp.Partition < 0 || tp.Partition > math.MaxInt32 {
					panic(fmt.Sprintf("group: partition %d does not fit the consumer protocol", tp.Partition))
				}
				dst = binary.BigEndian.AppendUint32(dst, uint32(tp.Partition))
			}
		}
	}
	return dst
}

// DecodeSubscription decodes a ConsumerProtocolSubscription of any
// version; [ErrBadRecord] if it is malformed. Fields of versions after 3
// are ignored. The result shares no memory with b.
func DecodeSubscription(b []byte) (Subscription, error) {
	r := wire.NewReader(b)
	v := r.Int16()
	s := Subscription{Generation: -1}
	if n := arrayLen(&r); n > 0 {
		s.Topics = make([]string, 0, n)
		for range n {
			s.Topics = append(s.Topics, r.Str())
		}
	}
	s.UserData = slices.Clone(r.NullableBytes())
	if v >= 1 {
		s.Owned = readTopicPartitions(&r)
	}
	if v >= 2 {
		s.Generation = r.Int32()
	}
	if v >= 3 {
		s.RackID, _ = r.NullableStr()
	}
	if r.Bad() || v < 0 || (v <= 3 && r.Len() != 0) {
		return Subscription{}, fmt.Errorf("group: consumer subscription version %d of %d bytes: %w", v, len(b), ErrBadRecord)
	}
	return s, nil
}

// DecodeAssignment decodes a ConsumerProtocolAssignment of any version:
// its partitions, in the order of the bytes, and its user data;
// [ErrBadRecord] if it is malformed. An empty b (a member a rebalance has
// not assigned yet) is no partitions. The result shares no memory with b.
func DecodeAssignment(b []byte) (parts []TopicPartition, userData []byte, err error) {
	if len(b) == 0 {
		return nil, nil, nil
	}
	r := wire.NewReader(b)
	v := r.Int16()
	parts = readTopicPartitions(&r)
	userData = slices.Clone(r.NullableBytes())
	if r.Bad() || v < 0 || (v <= 3 && r.Len() != 0) {
		return nil, nil, fmt.Errorf("group: consumer assignment version %d of %d bytes: %w", v, len(b), ErrBadRecord)
	}
	return parts, userData, nil
}

// readTopicPartitions reads an array of (topic, partitions).
func readTopicPartitions(r *wire.Reader) []TopicPartition {
	var out []TopicPartition
	for range arrayLen(r) {
		t := r.Str()
		for range arrayLen(r) {
			p := r.Int32()
			if p < 0 {
				r.Fail()
			}
			out = append(out, TopicPartition{Topic: t, Partition: int(p)})
		}
	}
	return out
}

// arrayLen reads an array's int32 count; a negative one, or one larger
// than the bytes left could hold, makes r bad.
func arrayLen(r *wire.Reader) int {
	n := int(r.Int32())
	if n < 0 || n > r.Len() {
		r.Fail()
		return 0
	}
	return n
}
