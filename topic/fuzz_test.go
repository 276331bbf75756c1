package topic_test

import (
	"testing"

	"github.com/stratalog/strata/internal/murmur2vec"
	"github.com/stratalog/strata/topic"
	"github.com/stretchr/testify/require"
)

// FuzzMurmur2 compares Murmur2 with the reference implementation and checks
// that KeyPartition stays in range and agrees with the hash.
func FuzzMurmur2(f *testing.F) {
	for _, v := range murmur2vec.Hashes {
		f.Add(v.Key, uint16(1000))
	}
	f.Add([]byte{}, uint16(1))
	f.Add([]byte("21"), uint16(0))
	f.Fuzz(func(t *testing.T, key []byte, n uint16) {
		want := javaMurmur2(key, faithful)
		require.Equal(t, want, topic.Murmur2(key))

		got := topic.KeyPartition(key, int(n))
		if n == 0 {
			require.Equal(t, -1, got)
			return
		}
		require.Equal(t, int(want&0x7fffffff)%int(n), got)
		require.GreaterOrEqual(t, got, 0)
		require.Less(t, got, int(n))
	})
}
