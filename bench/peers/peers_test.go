package peers

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// confRecord is record i of the conformance workload: its content is a
// function of i, so every read can be checked.
func confRecord(i int64) Rec {
	return Rec{
		Key:   fmt.Appendf(nil, "key-%012d", i),
		Value: fmt.Appendf(nil, "value %d of the conformance test, %x", i, uint64(i)*0x9E3779B97F4A7C15),
	}
}

// appendConf appends records [from, to) in calls of n records.
func appendConf(t *testing.T, l Log, from, to int64, n int) {
	t.Helper()
	for i := from; i < to; i += int64(n) {
		var recs []Rec
		for j := i; j < min(i+int64(n), to); j++ {
			recs = append(recs, confRecord(j))
		}
		require.NoError(t, l.Append(recs), "append at %d", i)
	}
	if f, ok := l.(Flusher); ok {
		require.NoError(t, f.Flush())
	}
}

// checkScan scans from from and wants exactly the records [from, end).
func checkScan(t *testing.T, l Log, from, end int64) {
	t.Helper()
	next := from
	require.NoError(t, l.Scan(from, func(i int64, key, value []byte) bool {
		want := confRecord(next)
		require.Equal(t, next, i, "index")
		require.Equal(t, string(want.Key), string(key), "key of %d", i)
		require.Equal(t, string(want.Value), string(value), "value of %d", i)
		next++
		return true
	}))
	require.Equal(t, end, next, "scan from %d ended before the last record", from)
}

func checkGet(t *testing.T, l Log, i int64) {
	t.Helper()
	want := confRecord(i)
	called := false
	require.NoError(t, l.Get(i, func(key, value []byte) {
		called = true
		require.Equal(t, string(want.Key), string(key), "key of %d", i)
		require.Equal(t, string(want.Value), string(value), "value of %d", i)
	}), "get %d", i)
	require.True(t, called, "Get(%d) did not call fn", i)
}

// TestConformance runs every registered peer through a small workload,
// non-durable and durable: appends of 1 and of 100 records, scans from the
// start and from the middle (one stopped early), point reads, and for the
// peers on disk a reopen that finds every record and appends after them.
func TestConformance(t *testing.T) {
	const n = 300
	for _, p := range All() {
		for _, durable := range []bool{false, true} {
			t.Run(fmt.Sprintf("peer=%s/durable=%v", p.Name, durable), func(t *testing.T) {
				t.Parallel()
				dir := filepath.Join(t.TempDir(), "log")
				o := Options{Durable: durable}
				l, err := p.Open(dir, o)
				require.NoError(t, err)
				appendConf(t, l, 0, 50, 1)
				appendConf(t, l, 50, 250, 100)
				appendConf(t, l, 250, n, 1)
				checkScan(t, l, 0, n)
				checkScan(t, l, 123, n)
				checkScan(t, l, n, n)
				stopped := 0
				require.NoError(t, l.Scan(200, func(i int64, _, _ []byte) bool {
					stopped++
					return stopped < 3
				}))
				require.Equal(t, 3, stopped, "a Scan whose fn returns false stops")
				for _, i := range []int64{0, 1, 49, 50, 149, 250, n - 1} {
					checkGet(t, l, i)
				}
				require.NoError(t, l.Close())
				if p.InMemory {
					return
				}

				l, err = p.Open(dir, o)
				require.NoError(t, err)
				checkGet(t, l, n-1)
				if p.Only == "w6" { // its reopen holds the last record alone
					require.NoError(t, l.Close())
					return
				}
				checkScan(t, l, 0, n)
				appendConf(t, l, n, n+10, 1)
				appendConf(t, l, n+10, n+110, 100)
				checkScan(t, l, n-5, n+110)
				checkGet(t, l, n+109)
				require.NoError(t, l.Close())
			})
		}
	}
}

func TestKV(t *testing.T) {
	b := appendKV(nil, []byte("key"), []byte("value"))
	k, v, err := splitKV(b)
	require.NoError(t, err)
	require.Equal(t, "key", string(k))
	require.Equal(t, "value", string(v))

	k, v, err = splitKV(appendKV(nil, nil, nil))
	require.NoError(t, err)
	require.Empty(t, k)
	require.Empty(t, v)

	for _, bad := range [][]byte{nil, {0x80}, {5, 'a'}} {
		_, _, err := splitKV(bad)
		require.ErrorIs(t, err, errBadEntry, "%x", bad)
	}
}
