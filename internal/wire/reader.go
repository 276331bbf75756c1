// Package wire reads the fields of the records of Kafka's internal topics
// (__consumer_offsets, __transaction_state): big-endian integers, strings
// with an int16 length, and the unsigned varints, compact strings and
// tagged fields of their flexible versions (Kafka's protocol types,
// clients/src/main/java/org/apache/kafka/common/protocol/types/Type.java).
package wire

import (
	"encoding/binary"
	"math"
)

// Reader consumes fields from the front of a byte slice. The first field
// that does not read (too few bytes, a negative length, a varint over 31
// bits) makes it bad, and every later read returns a zero value: a caller
// reads every field, then checks Bad once.
type Reader struct {
	b   []byte
	bad bool
}

// NewReader returns a Reader of b.
func NewReader(b []byte) Reader { return Reader{b: b} }

// Bad reports whether a read failed (or Fail was called).
func (r *Reader) Bad() bool { return r.bad }

// Fail makes r bad, for a field its caller refuses.
func (r *Reader) Fail() { r.bad = true }

// Len returns how many bytes are left.
func (r *Reader) Len() int { return len(r.b) }

// Take returns the next n bytes, or nil (making r bad) if fewer remain or
// n is negative.
func (r *Reader) Take(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

// Int8 reads an int8.
func (r *Reader) Int8() int8 {
	if p := r.Take(1); p != nil {
		return int8(p[0])
	}
	return 0
}

// Int16 reads a big-endian int16.
func (r *Reader) Int16() int16 {
	if p := r.Take(2); p != nil {
		return int16(binary.BigEndian.Uint16(p))
	}
	return 0
}

// Int32 reads a big-endian int32.
func (r *Reader) Int32() int32 {
	if p := r.Take(4); p != nil {
		return int32(binary.BigEndian.Uint32(p))
	}
	return 0
}

// Int64 reads a big-endian int64.
func (r *Reader) Int64() int64 {
	if p := r.Take(8); p != nil {
		return int64(binary.BigEndian.Uint64(p))
	}
	return 0
}

// Uvarint reads an unsigned varint of at most math.MaxInt32, as Kafka's
// flexible versions write lengths and counts.
func (r *Reader) Uvarint() int {
	if r.bad {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > math.MaxInt32 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

// Str reads a string of an int16 length; a negative length (null) is bad,
// since no field of these records is nullable.
func (r *Reader) Str() string {
	return string(r.Take(int(r.Int16())))
}

// CompactStr reads a compact string: an unsigned varint of the length
// plus one (zero would be null, which is bad here), then the bytes.
func (r *Reader) CompactStr() string {
	return string(r.Take(r.Uvarint() - 1))
}

// TaggedFields reads a tagged-field section: a count, then for each field
// a tag, a size and that many bytes, which it hands to field; a field that
// field refuses (false) makes r bad.
func (r *Reader) TaggedFields(field func(tag int, b []byte) bool) {
	for n := r.Uvarint(); n > 0 && !r.bad; n-- {
		tag := r.Uvarint()
		b := r.Take(r.Uvarint())
		if !r.bad && !field(tag, b) {
			r.bad = true
		}
	}
}

// NullableStr reads a string of an int16 length, -1 being null (returned
// as "", with null set).
func (r *Reader) NullableStr() (s string, null bool) {
	n := int(r.Int16())
	if n == -1 && !r.bad {
		return "", true
	}
	return string(r.Take(n)), false
}

// CompactNullableStr reads a compact nullable string: an unsigned varint
// of the length plus one, zero being null.
func (r *Reader) CompactNullableStr() (s string, null bool) {
	n := r.Uvarint()
	if n == 0 && !r.bad {
		return "", true
	}
	return string(r.Take(n - 1)), false
}

// Bytes reads bytes of an int32 length; a negative length (null) is bad.
// The result aliases the reader's slice.
func (r *Reader) Bytes() []byte {
	n := r.Int32()
	if n < 0 {
		r.bad = true
		return nil
	}
	return r.Take(int(n))
}

// NullableBytes reads bytes of an int32 length, -1 being null (nil). The
// result aliases the reader's slice.
func (r *Reader) NullableBytes() []byte {
	n := r.Int32()
	if n == -1 {
		return nil
	}
	if n < 0 {
		r.bad = true
		return nil
	}
	return r.Take(int(n))
}

// CompactBytes reads compact bytes: an unsigned varint of the length plus
// one (zero would be null, which is bad here), then the bytes. The result
// aliases the reader's slice.
func (r *Reader) CompactBytes() []byte {
	return r.Take(r.Uvarint() - 1)
}
