package strata_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// TestPartitionForGoldenVectors: the partitions Kafka's own tests and
// other clients' give for keys and partition counts (as in the topic
// package's tests), and for the murmur2 golden hashes of Kafka's
// UtilsTest, librdkafka and the JVM, the partition toPositive(hash) % n.
func TestPartitionForGoldenVectors(t *testing.T) {
	s := stratatest.Open(t, nil)
	for _, n := range []int{1, 10, 50, 100} {
		require.NoError(t, s.CreateTopic(fmt.Sprint("p", n), strata.TopicConfig{Partitions: n}))
	}
	partitions := []struct {
		name string
		key  []byte
		n    int
		want int
	}{
		{"kafka/21 of 10", []byte("21"), 10, 0},
		{"kafka/21 of 50", []byte("21"), 50, 40},
		{"kafka/foobar of 10", []byte("foobar"), 10, 6},
		{"sarama/foo", []byte("foo"), 100, 16},
		{"sarama/bar", []byte("bar"), 100, 45},
		{"sarama/baz", []byte("baz"), 100, 80},
		{"sarama/kafka", []byte("kafka"), 100, 80},
		{"sarama/sarama", []byte("sarama"), 100, 11},
		{"empty key", []byte{}, 1, 0},
		{"one partition", []byte("kafka"), 1, 0},
	}
	for _, tt := range partitions {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.PartitionFor(fmt.Sprint("p", tt.n), tt.key)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
	u32 := func(u uint32) int32 { return int32(u) }
	hashes := []struct {
		key  []byte
		hash int32 // Kafka's Utils.murmur2 of key
	}{
		// Kafka UtilsTest.testMurmur2.
		{[]byte("21"), -973932308},
		{[]byte("foobar"), -790332482},
		{[]byte("a-little-bit-long-string"), -985981536},
		{[]byte("a-little-bit-longer-string"), -1486304829},
		{[]byte("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"), -58897971},
		{[]byte{'a', 'b', 'c'}, 479470107},
		// IBM/sarama.
		{[]byte(""), 275646681},
		{[]byte("foo"), 597841616},
		{[]byte("bar"), 988958145},
		{[]byte("baz"), 1973573280},
		{[]byte("kafka"), -798503068},
		{[]byte("sarama"), 770765511},
		// librdkafka.
		{[]byte("1234"), u32(0x9fc97b14)},
		{[]byte("234"), u32(0xe7c009ca)},
		{[]byte("34"), u32(0x873930da)},
		{[]byte("4"), u32(0x5a4b5ca1)},
		// High bytes, computed on a JVM.
		{[]byte{0x80, 0xff, 0xfe, 0x90, 0x81}, 1338093621},
		{[]byte{0xff}, -311467685},
		{[]byte{0xff, 0xff}, -1642832928},
		{[]byte{0xff, 0xff, 0xff}, 1548199422},
		{[]byte{0xff, 0xff, 0xff, 0xff}, 644171429},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}, -1845943597},
		{[]byte("héllo wörld"), 439213890},
	}
	for _, h := range hashes {
		for _, n := range []int{10, 50, 100} {
			got, err := s.PartitionFor(fmt.Sprint("p", n), h.key)
			require.NoError(t, err)
			require.Equal(t, int(h.hash&0x7fffffff)%n, got, "key %q of %d partitions", h.key, n)
		}
	}
}

// TestPartitionForIsAppendsRouting: every keyed record Append writes lands
// in the partition PartitionFor names.
func TestPartitionForIsAppendsRouting(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 7}))
	var recs []strata.Record
	for i := range 200 {
		recs = append(recs, rec(fmt.Sprint("user-", i), "v"))
	}
	recs = append(recs, strata.Record{Key: []byte{}, Value: []byte("empty key")})
	pos, err := s.Append(ctx, "t", recs...)
	require.NoError(t, err)
	seen := map[int]bool{}
	for i, r := range recs {
		p, err := s.PartitionFor("t", r.Key)
		require.NoError(t, err)
		require.Equal(t, pos[i].Partition, p, "key %q", r.Key)
		seen[p] = true
	}
	require.Len(t, seen, 7, "the keys spread over every partition")
}

// TestPartitionForBadInput: a nil key is ErrNoKey, unknown and internal
// topics fail, and a closed store is ErrClosed.
func TestPartitionForBadInput(t *testing.T) {
	s, err := strata.Open(t.TempDir(), &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 3}))
	tests := []struct {
		name  string
		topic string
		key   []byte
		want  error
	}{
		{"nil key", "t", nil, strata.ErrNoKey},
		{"unknown topic", "nope", []byte("k"), strata.ErrUnknownTopic},
		{"internal topic", strata.ConsumerOffsetsTopic, []byte("k"), strata.ErrReservedTopic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.PartitionFor(tt.topic, tt.key)
			require.ErrorIs(t, err, tt.want)
		})
	}
	require.NoError(t, s.Close())
	_, err = s.PartitionFor("t", []byte("k"))
	require.ErrorIs(t, err, strata.ErrClosed)
}
