package strata_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/internal/murmur2vec"
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
	// The partition counts the store holds topics of (the vectors' other
	// counts, and their refusals, are KeyPartition's).
	counts := map[int]bool{1: true, 10: true, 50: true, 100: true}
	for _, tt := range murmur2vec.Partitions {
		if !counts[tt.Partitions] || tt.Want < 0 {
			continue
		}
		t.Run(tt.Name, func(t *testing.T) {
			got, err := s.PartitionFor(fmt.Sprint("p", tt.Partitions), tt.Key)
			require.NoError(t, err)
			require.Equal(t, tt.Want, got)
		})
	}
	for _, h := range murmur2vec.Hashes {
		for _, n := range []int{10, 50, 100} {
			got, err := s.PartitionFor(fmt.Sprint("p", n), h.Key)
			require.NoError(t, err)
			require.Equal(t, int(h.Want&0x7fffffff)%n, got, "key %q of %d partitions", h.Key, n)
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
