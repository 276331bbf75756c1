package typed

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/stratalog/strata"
)

// Record is a strata.Record whose key and value are Go values, encoded and
// decoded by codecs.
type Record[K, V any] struct {
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
	Headers []strata.Header
}

// Producer produces records of Go values: it encodes the key and the value
// with its codecs, then hands the record to a strata.Producer. It is safe
// for concurrent use; Flush and Close the strata.Producer itself.
type Producer[K, V any] struct {
	p      *strata.Producer
	keys   Codec[K]
	values Codec[V]
}

// NewProducer returns a Producer that encodes keys and values
// with the given codecs and produces through p. For records without a key,
// use a key codec that encodes to nil, such as Bytes() given nil.
func NewProducer[K, V any](p *strata.Producer, keys Codec[K], values Codec[V]) *Producer[K, V] {
	return &Producer[K, V]{p: p, keys: keys, values: values}
}

// Produce encodes key and value and produces them as a record: see
// strata.Producer.Produce. A codec's failure is ErrEncode, wrapping the codec's
// error, and the callback is not called.
func (tp *Producer[K, V]) Produce(ctx context.Context, topicName string, key K, value V, callback func(strata.Position, error)) error {
	ctx = orBackground(ctx)
	return tp.ProduceRecord(ctx, topicName, Record[K, V]{Key: key, Value: value}, callback)
}

// ProduceRecord is Produce with a timestamp and headers.
func (tp *Producer[K, V]) ProduceRecord(ctx context.Context, topicName string, r Record[K, V], callback func(strata.Position, error)) error {
	ctx = orBackground(ctx)
	key, err := tp.keys.Encode(r.Key)
	if err != nil {
		return &codecError{kind: ErrEncode, msg: "typed: cannot encode the key of a record for " + topicName, err: err}
	}
	value, err := tp.values.Encode(r.Value)
	if err != nil {
		return &codecError{kind: ErrEncode, msg: "typed: cannot encode the value of a record for " + topicName, err: err}
	}
	return tp.p.Produce(ctx, topicName, strata.Record{Timestamp: r.Timestamp, Key: key, Value: value, Headers: r.Headers}, callback)
}

// readMax is how many records a Reader fetches at a time (Kafka's
// max.poll.records), and readWait how long one fetch waits for them.
const (
	readMax  = 500
	readWait = time.Minute
)

// Reader reads one partition of a topic from an offset on, decoding
// keys and values with its codecs. The records it returns are the caller's.
// A Reader is not safe for concurrent use.
type Reader[K, V any] struct {
	s      *strata.Store
	topic  string
	part   int
	offset int64 // of the next record Next returns
	keys   Codec[K]
	values Codec[V]
	buf    []strata.Record // fetched, not yet returned
}

// NewReader returns a Reader of a topic's partition that starts at offset
// (see strata.Store.ListOffsets for the Earliest and Latest offsets). An unknown topic or
// partition is reported by Next.
func NewReader[K, V any](s *strata.Store, topicName string, partition int, offset int64, keys Codec[K], values Codec[V]) *Reader[K, V] {
	return &Reader[K, V]{s: s, topic: topicName, part: partition, offset: offset, keys: keys, values: values}
}

// Next returns the next record, waiting for one to be appended if the
// reader is at the end of the partition, until ctx ends (ctx.Err()) or the
// store closes (strata.ErrClosed). An offset out of the partition's range
// is strata.ErrOffsetOutOfRange.
//
// A record whose key or value its codec cannot decode is ErrDecode, with
// the topic, partition and offset in the message and the codec's error
// wrapped; the reader moves past it, so the next call returns the record
// after it (Kafka's consumer would stay, until a seek).
func (r *Reader[K, V]) Next(ctx context.Context) (Record[K, V], error) {
	ctx = orBackground(ctx)
	for len(r.buf) == 0 {
		recs, err := r.s.Fetch(ctx, r.topic, r.part, r.offset, readMax, readWait)
		if err != nil {
			return Record[K, V]{}, err
		}
		r.buf = recs
	}
	rec := r.buf[0]
	r.buf[0] = strata.Record{}
	r.buf = r.buf[1:]
	r.offset = rec.Offset + 1
	key, err := r.keys.Decode(rec.Key)
	if err != nil {
		return Record[K, V]{}, r.decodeError("key", rec.Offset, err)
	}
	value, err := r.values.Decode(rec.Value)
	if err != nil {
		return Record[K, V]{}, r.decodeError("value", rec.Offset, err)
	}
	return Record[K, V]{Offset: rec.Offset, Timestamp: rec.Timestamp, Key: key, Value: value, Headers: rec.Headers}, nil
}

func (r *Reader[K, V]) decodeError(field string, offset int64, err error) error {
	return &codecError{kind: ErrDecode, msg: fmt.Sprintf("typed: cannot decode the %s of %s partition %d offset %d", field, r.topic, r.part, offset), err: err}
}

// Offset returns the offset of the record Next returns next.
func (r *Reader[K, V]) Offset() int64 { return r.offset }

// SetOffset makes Next continue at offset.
func (r *Reader[K, V]) SetOffset(offset int64) {
	r.offset = offset
	clear(r.buf)
	r.buf = r.buf[:0]
}

// All returns an iterator over the records from the reader's offset on, as
// Next returns them: it tails the partition until ctx ends or the store
// closes. A record that cannot be decoded is yielded as an ErrDecode error
// and the iteration goes on; any other error is yielded last.
func (r *Reader[K, V]) All(ctx context.Context) iter.Seq2[Record[K, V], error] {
	ctx = orBackground(ctx)
	return func(yield func(Record[K, V], error) bool) {
		for {
			rec, err := r.Next(ctx)
			if !yield(rec, err) || (err != nil && !errors.Is(err, ErrDecode)) {
				return
			}
		}
	}
}

// orBackground returns ctx, or context.Background() for a nil one, as the
// store takes a nil context.
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
