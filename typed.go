package strata

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"
)

// TypedRecord is a Record whose key and value are Go values, encoded and
// decoded by codecs.
type TypedRecord[K, V any] struct {
	// Offset is the record's offset in its partition, when read; producing
	// ignores it.
	Offset int64
	// Timestamp is the record's time; zero means "now" when produced.
	Timestamp time.Time
	// Key and Value are decoded when read and encoded when produced, by
	// the codecs of the reader or producer.
	Key   K
	Value V
	// Headers are the record's headers, raw.
	Headers []Header
}

// TypedProducer produces records of Go values: it encodes the key and the
// value with its codecs, then hands the record to a Producer. It is safe
// for concurrent use; Flush and Close the Producer itself.
type TypedProducer[K, V any] struct {
	p      *Producer
	keys   Codec[K]
	values Codec[V]
}

// NewTypedProducer returns a TypedProducer that encodes keys and values
// with the given codecs and produces through p. For records without a key,
// use a key codec that encodes to nil, such as Bytes() given nil.
func NewTypedProducer[K, V any](p *Producer, keys Codec[K], values Codec[V]) *TypedProducer[K, V] {
	return &TypedProducer[K, V]{p: p, keys: keys, values: values}
}

// Produce encodes key and value and produces them as a record: see
// Producer.Produce. A codec's failure is ErrEncode, wrapping the codec's
// error, and the callback is not called.
func (tp *TypedProducer[K, V]) Produce(ctx context.Context, topicName string, key K, value V, callback func(Position, error)) error {
	ctx = orBackground(ctx)
	return tp.ProduceRecord(ctx, topicName, TypedRecord[K, V]{Key: key, Value: value}, callback)
}

// ProduceRecord is Produce with a timestamp and headers.
func (tp *TypedProducer[K, V]) ProduceRecord(ctx context.Context, topicName string, r TypedRecord[K, V], callback func(Position, error)) error {
	ctx = orBackground(ctx)
	key, err := tp.keys.Encode(r.Key)
	if err != nil {
		return fmt.Errorf("strata: encoding the key of a record for %s: %w: %w", topicName, ErrEncode, err)
	}
	value, err := tp.values.Encode(r.Value)
	if err != nil {
		return fmt.Errorf("strata: encoding the value of a record for %s: %w: %w", topicName, ErrEncode, err)
	}
	return tp.p.Produce(ctx, topicName, Record{Timestamp: r.Timestamp, Key: key, Value: value, Headers: r.Headers}, callback)
}

// typedReadMax is how many records a TypedReader fetches at a time (Kafka's
// max.poll.records), and typedReadWait how long one fetch waits for them.
const (
	typedReadMax  = 500
	typedReadWait = time.Minute
)

// TypedReader reads one partition of a topic from an offset on, decoding
// keys and values with its codecs. The records it returns are the caller's.
// A TypedReader is not safe for concurrent use.
type TypedReader[K, V any] struct {
	s      *Store
	topic  string
	part   int
	offset int64 // of the next record Next returns
	keys   Codec[K]
	values Codec[V]
	buf    []Record // fetched, not yet returned
}

// NewTypedReader returns a TypedReader of a topic's partition that starts
// at offset (see ListOffsets for Earliest and Latest). An unknown topic or
// partition is reported by Next.
func NewTypedReader[K, V any](s *Store, topicName string, partition int, offset int64, keys Codec[K], values Codec[V]) *TypedReader[K, V] {
	return &TypedReader[K, V]{s: s, topic: topicName, part: partition, offset: offset, keys: keys, values: values}
}

// Next returns the next record, waiting for one to be appended if the
// reader is at the end of the partition, until ctx ends (ctx.Err()) or the
// store closes (ErrClosed). An offset out of the partition's range is
// ErrOffsetOutOfRange.
//
// A record whose key or value its codec cannot decode is ErrDecode, with
// the topic, partition and offset in the message and the codec's error
// wrapped; the reader moves past it, so the next call returns the record
// after it (Kafka's consumer would stay, until a seek).
func (r *TypedReader[K, V]) Next(ctx context.Context) (TypedRecord[K, V], error) {
	ctx = orBackground(ctx)
	for len(r.buf) == 0 {
		recs, err := r.s.Fetch(ctx, r.topic, r.part, r.offset, typedReadMax, typedReadWait)
		if err != nil {
			return TypedRecord[K, V]{}, err
		}
		r.buf = recs
	}
	rec := r.buf[0]
	r.buf[0] = Record{}
	r.buf = r.buf[1:]
	r.offset = rec.Offset + 1
	key, err := r.keys.Decode(rec.Key)
	if err != nil {
		return TypedRecord[K, V]{}, r.decodeError("key", rec.Offset, err)
	}
	value, err := r.values.Decode(rec.Value)
	if err != nil {
		return TypedRecord[K, V]{}, r.decodeError("value", rec.Offset, err)
	}
	return TypedRecord[K, V]{Offset: rec.Offset, Timestamp: rec.Timestamp, Key: key, Value: value, Headers: rec.Headers}, nil
}

func (r *TypedReader[K, V]) decodeError(field string, offset int64, err error) error {
	return fmt.Errorf("strata: decoding the %s of %s partition %d offset %d: %w: %w", field, r.topic, r.part, offset, ErrDecode, err)
}

// Offset returns the offset of the record Next returns next.
func (r *TypedReader[K, V]) Offset() int64 { return r.offset }

// SetOffset makes Next continue at offset.
func (r *TypedReader[K, V]) SetOffset(offset int64) {
	r.offset = offset
	clear(r.buf)
	r.buf = r.buf[:0]
}

// All returns an iterator over the records from the reader's offset on, as
// Next returns them: it tails the partition until ctx ends or the store
// closes. A record that cannot be decoded is yielded as an ErrDecode error
// and the iteration goes on; any other error is yielded last.
func (r *TypedReader[K, V]) All(ctx context.Context) iter.Seq2[TypedRecord[K, V], error] {
	ctx = orBackground(ctx)
	return func(yield func(TypedRecord[K, V], error) bool) {
		for {
			rec, err := r.Next(ctx)
			if !yield(rec, err) || (err != nil && !errors.Is(err, ErrDecode)) {
				return
			}
		}
	}
}
