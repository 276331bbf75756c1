package topic_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stratalog/strata/topic"
	"github.com/stretchr/testify/require"
)

// fromUint32 reinterprets a hash printed as unsigned (sarama, librdkafka) as
// the int32 that Java and Murmur2 return.
func fromUint32(u uint32) int32 { return int32(u) }

// hashVectors are values of Kafka's murmur2 (Utils.murmur2,
// clients/src/main/java/org/apache/kafka/common/utils/Utils.java), named by
// source.
var hashVectors = []struct {
	name string
	key  []byte
	want int32
}{
	// Kafka UtilsTest.testMurmur2.
	{"kafka/21", []byte("21"), -973932308},
	{"kafka/foobar", []byte("foobar"), -790332482},
	{"kafka/a-little-bit-long-string", []byte("a-little-bit-long-string"), -985981536},
	{"kafka/a-little-bit-longer-string", []byte("a-little-bit-longer-string"), -1486304829},
	{"kafka/lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", []byte("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"), -58897971},
	{"kafka/abc", []byte{'a', 'b', 'c'}, 479470107},

	// IBM/sarama partitioner_test.go.
	{"sarama/empty", []byte(""), 275646681},
	{"sarama/foo", []byte("foo"), 597841616},
	{"sarama/bar", []byte("bar"), 988958145},
	{"sarama/baz", []byte("baz"), 1973573280},
	{"sarama/kafka", []byte("kafka"), fromUint32(3496464228)},
	{"sarama/kafka as int32", []byte("kafka"), -798503068},
	{"sarama/sarama", []byte("sarama"), 770765511},

	// librdkafka raw hashes, via segmentio/kafka-go balancer_test.go.
	{"librdkafka/kafka", []byte("kafka"), fromUint32(0xd067cf64)},
	{"librdkafka/1234", []byte("1234"), fromUint32(0x9fc97b14)},
	{"librdkafka/234", []byte("234"), fromUint32(0xe7c009ca)},
	{"librdkafka/34", []byte("34"), fromUint32(0x873930da)},
	{"librdkafka/4", []byte("4"), fromUint32(0x5a4b5ca1)},
	{"librdkafka/empty", []byte(""), fromUint32(0x106e08d9)},

	// Bytes >= 0x80 in every position of blocks and tails, computed by
	// running Kafka's Utils.murmur2 on a JVM (Java byte and int semantics,
	// & 0xff, >>>).
	{"jvm/80 ff fe 90 81", []byte{0x80, 0xff, 0xfe, 0x90, 0x81}, 1338093621},
	{"jvm/ff", []byte{0xff}, -311467685},
	{"jvm/ff ff", []byte{0xff, 0xff}, -1642832928},
	{"jvm/ff ff ff", []byte{0xff, 0xff, 0xff}, 1548199422},
	{"jvm/ff ff ff ff", []byte{0xff, 0xff, 0xff, 0xff}, 644171429},
	{"jvm/80 x7", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}, -1845943597},
	{"jvm/utf-8 héllo wörld", []byte("héllo wörld"), 439213890},
}

func TestMurmur2(t *testing.T) {
	for _, tt := range hashVectors {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, topic.Murmur2(tt.key))
			require.Equal(t, tt.want, javaMurmur2(tt.key, faithful), "reference")
		})
	}
}

// TestMurmur2NilIsEmpty: the hash cannot tell nil from empty; only
// KeyPartition does.
func TestMurmur2NilIsEmpty(t *testing.T) {
	require.Equal(t, topic.Murmur2([]byte{}), topic.Murmur2(nil))
}

// TestVectorsCatchPitfalls shows that the vectors fail a port with one of
// the classic signedness mistakes (bytes sign-extended instead of masked
// with 0xff, >> instead of >>>), so that
// TestMurmur2 can fail.
func TestVectorsCatchPitfalls(t *testing.T) {
	tests := []struct {
		name string
		bug  pitfall
	}{
		{"sign-extended bytes", signExtendBytes},
		{"arithmetic shifts", arithmeticShift},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var caught []string
			for _, v := range hashVectors {
				if javaMurmur2(v.key, tt.bug) != v.want {
					caught = append(caught, v.name)
				}
			}
			require.NotEmpty(t, caught)
		})
	}
}

// TestMurmur2MatchesReference compares Murmur2 with the reference on random
// keys of every length from 0 to 64 and on keys made only of high bytes.
func TestMurmur2MatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 64; n++ {
		key := make([]byte, n)
		for range 200 {
			for i := range key {
				key[i] = byte(rng.Uint32())
			}
			require.Equal(t, javaMurmur2(key, faithful), topic.Murmur2(key), "key %x", key)
		}
		for i := range key {
			key[i] = 0x80 | byte(rng.Uint32())
		}
		require.Equal(t, javaMurmur2(key, faithful), topic.Murmur2(key), "key %x", key)
	}
}

func TestToPositive(t *testing.T) {
	tests := []struct {
		name string
		x    int32
		want int32
	}{
		{"zero", 0, 0},
		{"one", 1, 1},
		{"max", math.MaxInt32, math.MaxInt32},
		{"minus one", -1, math.MaxInt32},
		{"min", math.MinInt32, 0},
		{"murmur2 of 21", topic.Murmur2([]byte("21")), 1173551340},
		{"murmur2 of foobar", topic.Murmur2([]byte("foobar")), 1357151166},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, topic.ToPositive(tt.x))
			require.GreaterOrEqual(t, topic.ToPositive(tt.x), int32(0))
		})
	}
}

// TestToPositiveIsNotAbs: for a negative hash, masking and abs differ.
func TestToPositiveIsNotAbs(t *testing.T) {
	h := topic.Murmur2([]byte("21"))
	require.Equal(t, int32(-973932308), h)
	abs := -h
	require.Equal(t, int32(973932308), abs)
	require.Equal(t, int32(1173551340), topic.ToPositive(h))
	require.NotEqual(t, abs, topic.ToPositive(h))
	// The partitions differ too: abs would put "21" in partition 8 of 10.
	require.Equal(t, 0, topic.KeyPartition([]byte("21"), 10))
	require.Equal(t, 8, int(abs)%10)
}

func TestKeyPartition(t *testing.T) {
	tests := []struct {
		name          string
		key           []byte
		numPartitions int
		want          int
	}{
		// Kafka's UtilsTest.testMurmur2 hashes, toPositive(h) % n.
		{"kafka/21 of 10", []byte("21"), 10, 0},
		{"kafka/21 of 50", []byte("21"), 50, 40},
		{"kafka/foobar of 10", []byte("foobar"), 10, 6},

		// IBM/sarama, 100 partitions.
		{"sarama/foo", []byte("foo"), 100, 16},
		{"sarama/bar", []byte("bar"), 100, 45},
		{"sarama/baz", []byte("baz"), 100, 80},
		{"sarama/kafka", []byte("kafka"), 100, 80},
		{"sarama/sarama", []byte("sarama"), 100, 11},

		// kafka-python, 1000 partitions (via segmentio/kafka-go).
		{"kafka-python/empty", []byte(""), 1000, 681},
		{"kafka-python/a", []byte("a"), 1000, 524},
		{"kafka-python/ab", []byte("ab"), 1000, 434},
		{"kafka-python/abc", []byte("abc"), 1000, 107},
		{"kafka-python/123456789", []byte("123456789"), 1000, 566},
		{"kafka-python/nul space", []byte("\x00 "), 1000, 742},

		// High bytes (hash from the JVM vectors above).
		{"jvm/80 ff fe 90 81", []byte{0x80, 0xff, 0xfe, 0x90, 0x81}, 1000, 621},
		{"jvm/ff", []byte{0xff}, 1000, 963},

		// Null is not empty.
		{"nil key", nil, 1000, -1},
		{"nil key one partition", nil, 1, -1},
		{"empty key", []byte{}, 1000, 681},
		{"empty key one partition", []byte{}, 1, 0},

		// Partition counts.
		{"one partition", []byte("kafka"), 1, 0},
		{"zero partitions", []byte("kafka"), 0, -1},
		{"negative partitions", []byte("kafka"), -3, -1},
		{"max int32 partitions", []byte("21"), math.MaxInt32, 1173551340},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, topic.KeyPartition(tt.key, tt.numPartitions))
		})
	}
}

// TestKeyPartitionStable: the same key always maps to the same partition for
// the same count, and the result is always in range.
func TestKeyPartitionStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		key := make([]byte, rng.IntN(40))
		for i := range key {
			key[i] = byte(rng.Uint32())
		}
		n := 1 + rng.IntN(500)
		p := topic.KeyPartition(key, n)
		require.GreaterOrEqual(t, p, 0)
		require.Less(t, p, n)
		require.Equal(t, p, topic.KeyPartition(bytes.Clone(key), n))
	}
}
