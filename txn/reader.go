package txn

import "encoding/binary"

// reader consumes big-endian fields from b. The first short read sets bad
// and every later read returns zero values.
type reader struct {
	b   []byte
	bad bool
}

// take returns the next n bytes, or nil (setting bad) if fewer remain.
func (r *reader) take(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) int8() int8 {
	if p := r.take(1); p != nil {
		return int8(p[0])
	}
	return 0
}

func (r *reader) int16() int16 {
	if p := r.take(2); p != nil {
		return int16(binary.BigEndian.Uint16(p))
	}
	return 0
}

func (r *reader) int32() int32 {
	if p := r.take(4); p != nil {
		return int32(binary.BigEndian.Uint32(p))
	}
	return 0
}

func (r *reader) int64() int64 {
	if p := r.take(8); p != nil {
		return int64(binary.BigEndian.Uint64(p))
	}
	return 0
}

// uvarint reads an unsigned varint, at most 2^31.
func (r *reader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<31 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

// string reads an int16 length and that many bytes; a negative length is
// malformed here (no field of the format is a nullable string).
func (r *reader) string() string {
	n := r.int16()
	if n < 0 {
		r.bad = true
		return ""
	}
	return string(r.take(int(n)))
}

// compactString reads an unsigned varint length plus one and the bytes.
func (r *reader) compactString() string {
	n := int(r.uvarint()) - 1
	if n < 0 {
		r.bad = true
		return ""
	}
	return string(r.take(n))
}

// taggedFields reads a tagged-field section, calling fn with each field;
// fn returns false for a malformed one.
func (r *reader) taggedFields(fn func(tag int, field []byte) bool) {
	n := r.uvarint()
	for range n {
		tag := r.uvarint()
		size := r.uvarint()
		field := r.take(int(size))
		if r.bad {
			return
		}
		if !fn(int(tag), field) {
			r.bad = true
			return
		}
	}
}
