// Package murmur2vec holds golden vectors of Kafka's murmur2 partitioner
// for the tests of the packages that route keys (topic and the root
// package), so that they check one table.
package murmur2vec

import "math"

// Hash is a key and Kafka's Utils.murmur2 of it.
type Hash struct {
	Name string
	Key  []byte
	Want int32
}

// fromUint32 reinterprets a hash printed as unsigned (sarama, librdkafka) as
// the int32 that Java and Murmur2 return.
func fromUint32(u uint32) int32 { return int32(u) }

// Hashes are values of Kafka's murmur2 (Utils.murmur2,
// clients/src/main/java/org/apache/kafka/common/utils/Utils.java), named by
// source.
var Hashes = []Hash{
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

// Partition is a key, a partition count and the partition Kafka's default
// partitioner gives it: toPositive(murmur2(key)) % partitions, or -1
// where KeyPartition refuses (a nil key, no partitions).
type Partition struct {
	Name       string
	Key        []byte
	Partitions int
	Want       int
}

// Partitions are keys with the partitions Kafka's clients route them to.
var Partitions = []Partition{
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
