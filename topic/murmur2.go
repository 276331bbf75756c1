package topic

import "encoding/binary"

// murmur2 constants, as in Kafka's Utils.murmur2.
const (
	murmur2Seed uint32 = 0x9747b28c
	murmur2M    uint32 = 0x5bd1e995
	murmur2R           = 24
)

// Murmur2 returns Kafka's murmur2 hash of key, bit-identical to the Java
// client's Utils.murmur2, as the int32 that Java returns.
//
// The hash is MurmurHash2 with seed 0x9747b28c: 32-bit wrapping arithmetic,
// key bytes read as unsigned, logical right shifts, the key consumed in
// little-endian 4-byte blocks and the last 1–3 bytes mixed in as a tail. A
// nil key hashes like an empty one; telling them apart is the caller's job
// (see [KeyPartition]).
func Murmur2(key []byte) int32 {
	h := murmur2Seed ^ uint32(len(key))

	b := key
	for len(b) >= 4 {
		k := binary.LittleEndian.Uint32(b)
		k *= murmur2M
		k ^= k >> murmur2R
		k *= murmur2M
		h *= murmur2M
		h ^= k
		b = b[4:]
	}

	switch len(b) {
	case 3:
		h ^= uint32(b[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(b[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(b[0])
		h *= murmur2M
	}

	h ^= h >> 13
	h *= murmur2M
	h ^= h >> 15
	return int32(h)
}

// ToPositive returns x with its sign bit cleared (x & 0x7fffffff), like
// Kafka's Utils.toPositive. It is not an absolute value: ToPositive(-1) is
// 2147483647 and ToPositive(math.MinInt32) is 0.
func ToPositive(x int32) int32 {
	return x & 0x7fffffff
}

// KeyPartition returns the partition in [0, numPartitions) that Kafka's
// default partitioner picks for a record with the given key:
// ToPositive(Murmur2(key)) % numPartitions.
//
// numPartitions must be the topic's total partition count; the result is
// stable only while that count is unchanged.
//
// An empty, non-nil key is hashed like any other key. A nil key means the
// record has no key, which KeyPartition cannot place: it returns -1, and the
// caller picks a partition with a [StickyPartitioner] instead. KeyPartition
// also returns -1 if numPartitions < 1.
func KeyPartition(key []byte, numPartitions int) int {
	if key == nil || numPartitions < 1 {
		return -1
	}
	return int(ToPositive(Murmur2(key))) % numPartitions
}
