package mirror

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A source partition copied in transactions: source records at src, their
// target offsets at tgt (each transaction ends with a marker on the target),
// checked against the brute-force answer for every committed offset.
func TestTranslateExact(t *testing.T) {
	cases := []struct {
		name string
		txns [][]int64 // source offsets copied, one slice per transaction
	}{
		{"dense one txn", [][]int64{{0, 1, 2, 3, 4}}},
		{"dense many txns", [][]int64{{0, 1}, {2, 3, 4}, {5}, {6, 7}}},
		{"compaction gaps", [][]int64{{1, 4, 5, 9}, {10, 12}, {20}}},
		{"gap of one across a marker", [][]int64{{0, 1, 2}, {4, 5}, {7}}},
		{"start after retention", [][]int64{{100, 101}, {105, 106, 107}}},
		{"one record per txn with gaps", [][]int64{{3}, {7}, {8}, {15}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var l syncList
			var src, tgt []int64
			next := int64(0) // the target's next offset
			for _, txn := range tc.txns {
				tt := make([]int64, len(txn))
				for i := range txn {
					tt[i] = next
					next++
				}
				next++ // the commit marker
				prev, ok := l.last()
				for _, s := range runSyncs(prev, ok, txn, tt) {
					l = l.add(s)
				}
				src, tgt = append(src, txn...), append(tgt, tt...)
			}
			last := src[len(src)-1]
			for x := int64(0); x <= last+1; x++ {
				got, ok := l.translate(x)
				require.True(t, ok, "x=%d", x)
				// Want: the target offset of the first record at or
				// after x, or after the last record. Any offset in
				// (target of the last record below x, that] is right:
				// only markers lie between.
				lo, hi := int64(-1), tgt[len(tgt)-1]+1
				for i, s := range src {
					if s < x {
						lo = tgt[i]
					} else {
						hi = tgt[i]
						break
					}
				}
				require.Greater(t, got, lo, "x=%d: translated to %d, at or before a consumed record", x, got)
				require.LessOrEqual(t, got, hi, "x=%d: translated to %d, past an unconsumed record at %d", x, got, hi)
			}
			_, ok := l.translate(last + 2)
			require.False(t, ok, "beyond the progress")
			require.LessOrEqual(t, len(l), 2*len(tc.txns)+len(src), "syncs kept")
		})
	}
}

func TestSyncCodec(t *testing.T) {
	s := offsetSync{Upstream: 1 << 40, Downstream: 7}
	got, err := parseSyncValue(s.appendValue(nil))
	require.NoError(t, err)
	require.Equal(t, s, got)
	_, err = parseSyncValue([]byte{1, 2, 3})
	require.ErrorIs(t, err, errBadSync)

	topic, p, err := parseSyncKey(syncKey("a.b-c", 12))
	require.NoError(t, err)
	require.Equal(t, "a.b-c", topic)
	require.Equal(t, int32(12), p)
	for _, bad := range []string{"", "x", "/1", "x/", "x/-1", "x/y"} {
		_, _, err := parseSyncKey([]byte(bad))
		require.ErrorIs(t, err, errBadSync, bad)
	}
}

// A sync that goes back (the target topic emptied and refilled, or an
// at-least-once copy again from the progress) replaces what it
// contradicts.
func TestSyncListBackwards(t *testing.T) {
	var l syncList
	l = l.add(offsetSync{0, 0})
	l = l.add(offsetSync{5, 5})
	l = l.add(offsetSync{5, 9}) // the records from 5 copied again at 9
	require.Equal(t, syncList{{0, 0}, {5, 9}}, l)
	got, ok := l.translate(5)
	require.True(t, ok)
	require.Equal(t, int64(9), got)
	got, _ = l.translate(3)
	require.Equal(t, int64(3), got)
}
