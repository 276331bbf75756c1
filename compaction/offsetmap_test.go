package compaction

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// constHash maps every key to the same hash: every key collides.
func constHash(h uint64) func([]byte) uint64 { return func([]byte) uint64 { return h } }

func TestOffsetMapPutGet(t *testing.T) {
	type op struct {
		key    string
		offset int64
	}
	type want struct {
		key    string
		offset int64
		ok     bool
	}
	tests := []struct {
		name string
		hash func([]byte) uint64
		puts []op
		gets []want
		len  int
	}{
		{"empty", nil, nil, []want{{"a", 0, false}}, 0},
		{"one", nil, []op{{"a", 7}}, []want{{"a", 7, true}, {"b", 0, false}}, 1},
		{"overwrite", nil, []op{{"a", 1}, {"b", 2}, {"a", 3}}, []want{{"a", 3, true}, {"b", 2, true}}, 2},
		{"empty key is a key", nil, []op{{"", 5}}, []want{{"", 5, true}, {"x", 0, false}}, 1},
		{"prefixes differ", nil, []op{{"ab", 1}, {"a", 2}, {"abc", 3}}, []want{{"a", 2, true}, {"ab", 1, true}, {"abc", 3, true}}, 3},
		{"all collide", constHash(42), []op{{"a", 1}, {"b", 2}, {"a", 3}, {"c", 4}}, []want{{"a", 3, true}, {"b", 2, true}, {"c", 4, true}, {"d", 0, false}}, 3},
		{"hash zero", constHash(0), []op{{"a", 1}, {"b", 2}}, []want{{"a", 1, true}, {"b", 2, true}, {"c", 0, false}}, 2},
		{"zero and one collide", func(k []byte) uint64 { return uint64(len(k)) % 2 }, []op{{"", 1}, {"a", 2}, {"bb", 3}}, []want{{"", 1, true}, {"a", 2, true}, {"bb", 3, true}, {"c", 0, false}}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewOffsetMap(1<<16, tt.hash)
			for _, p := range tt.puts {
				require.True(t, m.Put([]byte(p.key), p.offset))
			}
			for _, g := range tt.gets {
				off, ok := m.Get([]byte(g.key))
				require.Equal(t, g.ok, ok, "key %q", g.key)
				require.Equal(t, g.offset, off, "key %q", g.key)
			}
			require.Equal(t, tt.len, m.Len())
		})
	}
}

func TestOffsetMapGrowsAndKeepsEveryKey(t *testing.T) {
	for _, hash := range []struct {
		name string
		fn   func([]byte) uint64
	}{{"xxhash", nil}, {"poor", func(k []byte) uint64 { return uint64(len(k)) }}} {
		t.Run(hash.name, func(t *testing.T) {
			m := NewOffsetMap(8<<20, hash.fn)
			n := 20_000
			if hash.fn != nil {
				n = 2_000 // every key in few probe chains: quadratic
			}
			for i := range n {
				require.True(t, m.Put(fmt.Appendf(nil, "key-%d", i), int64(i)))
			}
			for i := range n {
				off, ok := m.Get(fmt.Appendf(nil, "key-%d", i))
				require.True(t, ok)
				require.Equal(t, int64(i), off)
			}
			require.Equal(t, n, m.Len())
			require.LessOrEqual(t, m.Bytes(), m.Budget())
		})
	}
}

func TestOffsetMapFull(t *testing.T) {
	tests := []struct {
		name   string
		budget int
		keyLen int
	}{
		{"small keys", 4 << 10, 8},
		{"large keys", 4 << 10, 200},
		{"tiny budget", 100, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewOffsetMap(tt.budget, nil)
			key := func(i int) []byte {
				k := make([]byte, tt.keyLen)
				copy(k, fmt.Sprint(i))
				return k
			}
			n := 0
			for m.Put(key(n), int64(n)) {
				require.LessOrEqual(t, m.Bytes(), tt.budget)
				n++
				require.Less(t, n, tt.budget, "never full")
			}
			require.Equal(t, n, m.Len())
			require.LessOrEqual(t, m.Bytes(), tt.budget)
			// The budget is used: another key would not fit.
			require.Greater(t, m.Bytes()+SlotBytes+tt.keyLen, tt.budget*4/10)
			// Full: new keys are refused, known keys still update.
			require.False(t, m.Put(key(n+1), 1))
			_, ok := m.Get(key(n + 1))
			require.False(t, ok)
			if n > 0 {
				require.True(t, m.Put(key(0), 999))
				off, ok := m.Get(key(0))
				require.True(t, ok)
				require.Equal(t, int64(999), off)
			}
			for i := 1; i < n; i++ {
				off, ok := m.Get(key(i))
				require.True(t, ok)
				require.Equal(t, int64(i), off)
			}
			// Reset empties it and the same keys fit again.
			m.reset()
			require.Zero(t, m.Len())
			_, ok = m.Get(key(1))
			require.False(t, ok)
			for i := range n {
				require.True(t, m.Put(key(i), int64(i)))
			}
		})
	}
}

func TestOffsetMapBytesPerKey(t *testing.T) {
	m := NewOffsetMap(0, nil)
	require.Equal(t, DefaultBufferBytes, m.Budget())
	require.Zero(t, m.BytesPerKey())
	for i := range 100_000 {
		require.True(t, m.Put(fmt.Appendf(nil, "%016d", i), int64(i)))
	}
	// A 16-byte key costs its bytes plus a slot at a load between 0.45
	// and 0.9.
	require.InDelta(t, 16+SlotBytes/0.675, m.BytesPerKey(), SlotBytes/0.9)
}
