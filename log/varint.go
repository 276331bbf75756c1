package log

import (
	"encoding/binary"
	"math/bits"
)

// Kafka's varints are protobuf's: the zig-zag encoding of a signed value,
// written 7 bits a byte, least significant group first, with the high bit set
// on every byte but the last. A varint holds an int32 in at most 5 bytes, a
// varlong an int64 in at most 10.
//
// The readers accept only the shortest encoding of each value (no trailing
// 0x80 0x00 padding, no bits beyond 32 or 64), so that every accepted batch
// re-encodes to the very same bytes.

const (
	maxVarintLen  = 5
	maxVarlongLen = 10
	// The last byte of a maximal encoding carries the bits that remain: 4 of
	// the 32 for a varint, 1 of the 64 for a varlong.
	maxVarintLast  = 0x0f
	maxVarlongLast = 0x01
)

// AppendVarint appends the zig-zag varint encoding of v to dst.
func AppendVarint(dst []byte, v int32) []byte {
	return binary.AppendUvarint(dst, zigzag32(v))
}

// AppendVarlong appends the zig-zag varlong encoding of v to dst.
func AppendVarlong(dst []byte, v int64) []byte {
	return binary.AppendUvarint(dst, zigzag64(v))
}

// putUvarint writes u at b[p:], which must have room, and returns where it
// ends. Unlike binary.PutUvarint it inlines.
func putUvarint(b []byte, p int, u uint64) int {
	for u >= 0x80 {
		b[p] = byte(u) | 0x80
		u >>= 7
		p++
	}
	b[p] = byte(u)
	return p + 1
}

// SizeVarint returns the number of bytes [AppendVarint] writes for v.
func SizeVarint(v int32) int {
	return uvarintSize(zigzag32(v))
}

// SizeVarlong returns the number of bytes [AppendVarlong] writes for v.
func SizeVarlong(v int64) int {
	return uvarintSize(zigzag64(v))
}

// uvarintSize returns ceil(bits/7) for the bits u needs (at least 1),
// computed as (9*bits + 64) / 64, which is exact for 1 to 64 bits and
// cheaper than a division by 7.
func uvarintSize(u uint64) int {
	return int((9*uint(bits.Len64(u|1)) + 64) / 64)
}

// ReadVarint decodes a zig-zag varint from the start of b and returns it with
// the number of bytes it took. It fails with [ErrIncomplete] if b ends inside
// the varint, and with [ErrCorrupt] if the encoding is longer than 5 bytes,
// overflows 32 bits or is not the shortest one.
func ReadVarint(b []byte) (int32, int, error) {
	u, n := uvarintAt(b, 0, maxVarintLen, maxVarintLast)
	if n <= 0 {
		return 0, 0, varintError(n, "varint")
	}
	return unzigzag32(uint32(u)), n, nil
}

// ReadVarlong decodes a zig-zag varlong from the start of b and returns it
// with the number of bytes it took. It fails with [ErrIncomplete] if b ends
// inside the varlong, and with [ErrCorrupt] if the encoding is longer than 10
// bytes, overflows 64 bits or is not the shortest one.
func ReadVarlong(b []byte) (int64, int, error) {
	u, n := uvarintAt(b, 0, maxVarlongLen, maxVarlongLast)
	if n <= 0 {
		return 0, 0, varintError(n, "varlong")
	}
	return unzigzag64(u), n, nil
}

func varintError(n int, what string) error {
	if n == 0 {
		return errorf(ErrIncomplete, "truncated %s", what)
	}
	return errorf(ErrCorrupt, "malformed %s", what)
}

func zigzag32(v int32) uint64 { return uint64(uint32(v<<1 ^ v>>31)) }

func zigzag64(v int64) uint64 { return uint64(v<<1 ^ v>>63) }

func unzigzag32(u uint32) int32 { return int32(u>>1) ^ -int32(u&1) }

func unzigzag64(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// uvarintAt decodes the minimal unsigned varint (LEB128) of at most maxLen
// bytes at b[p:], whose last byte, when it is the maxLen-th, is at most last.
// It returns the value and the position after it, or the position 0 if b
// ends inside the varint and -1 if the varint is malformed (padded, too
// long, or with bits beyond the type's width). Small enough to inline, it
// costs the record decoder no call per field.
func uvarintAt(b []byte, p, maxLen int, last byte) (uint64, int) {
	var u uint64
	for s := uint(0); s < 7*uint(maxLen); s += 7 {
		if p >= len(b) {
			return 0, 0
		}
		c := b[p]
		p++
		u |= uint64(c&0x7f) << s
		if c < 0x80 {
			if (s > 0 && c == 0) || (s == 7*uint(maxLen-1) && c > last) {
				break // padded, or bits beyond the type's width
			}
			return u, p
		}
	}
	return 0, -1 // too long, or malformed as above
}

// RecordLength reads the length prefix of the record at the start of b, as
// a reader stepping over records without decoding them needs: it returns
// the size n of the prefix and the length of the record's body after it.
// A body shorter than the smallest record (6 bytes: attributes and five
// one-byte varints) or longer than what b holds after the prefix is
// [ErrCorrupt]. One- and two-byte prefixes, the common ones, take a fast
// path.
func RecordLength(b []byte) (n, length int, err error) {
	var v int32
	switch {
	case len(b) > 0 && b[0] < 0x80:
		v, n = unzigzag32(uint32(b[0])), 1
	case len(b) > 1 && b[1]-1 < 0x7f: // 1..0x7f: a last byte, and not padding
		v, n = unzigzag32(uint32(b[0]&0x7f)|uint32(b[1])<<7), 2
	default:
		if v, n, err = ReadVarint(b); err != nil {
			return 0, 0, errorf(ErrCorrupt, "record length: %v", err)
		}
	}
	if v < minRecordBody || int64(v) > int64(len(b)-n) {
		return 0, 0, errorf(ErrCorrupt, "record length %d with %d bytes left", v, len(b)-n)
	}
	return n, int(v), nil
}

// uvarintShort decodes the varint at b[p:] if it takes one or two bytes, as
// most of a record's fields do (lengths below 64 or 8192, small offset and
// timestamp deltas), and returns the value and the position after it; it
// returns the position 0 for any other varint, a longer or a malformed one,
// which uvarintAt then decodes or rejects. A second byte of 1 to 0x7f ends
// the varint and is no padding; varints and varlongs both take more than
// two bytes, so no width limit applies.
func uvarintShort(b []byte, p int) (uint64, int) {
	if uint(p) < uint(len(b)) {
		if c := b[p]; c < 0x80 {
			return uint64(c), p + 1
		} else if uint(p+1) < uint(len(b)) && b[p+1]-1 < 0x7f {
			return uint64(c&0x7f) | uint64(b[p+1])<<7, p + 2
		}
	}
	return 0, 0
}

// SkipRecord returns where the record at batch[p:] ends, for a record whose
// length prefix takes one or two bytes (a body under 8 KiB), and -1 for any
// other, or a length that is negative or below a record's least: the
// caller then reads the prefix with RecordLength, which decodes the rest
// and reports the failures. The end it returns may lie past batch.
// Stepping over a batch's records by their prefixes is a chain of loads,
// each from the last one's result; this makes each step a few
// instructions.
func SkipRecord(batch []byte, p int) int {
	if uint(p+1) < uint(len(batch)) {
		if c := batch[p]; c < 0x80 {
			if c&1 == 0 && c >= 2*minRecordBody {
				return p + 1 + int(c>>1)
			}
		} else if d := batch[p+1]; d-1 < 0x7f && c&1 == 0 {
			return p + 2 + (int(c&0x7f)|int(d)<<7)>>1
		}
	}
	return -1
}
