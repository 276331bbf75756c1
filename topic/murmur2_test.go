package topic_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stratalog/strata/internal/murmur2vec"
	"github.com/stratalog/strata/topic"
	"github.com/stretchr/testify/require"
)

func TestMurmur2(t *testing.T) {
	for _, tt := range murmur2vec.Hashes {
		t.Run(tt.Name, func(t *testing.T) {
			require.Equal(t, tt.Want, topic.Murmur2(tt.Key))
			require.Equal(t, tt.Want, javaMurmur2(tt.Key, faithful), "reference")
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
			for _, v := range murmur2vec.Hashes {
				if javaMurmur2(v.Key, tt.bug) != v.Want {
					caught = append(caught, v.Name)
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
	for _, tt := range murmur2vec.Partitions {
		t.Run(tt.Name, func(t *testing.T) {
			require.Equal(t, tt.Want, topic.KeyPartition(tt.Key, tt.Partitions))
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
