package partition

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// Tests of Truncate's edges: a segment it removed while a reader held it,
// and a cut inside a compacted batch.

// TestOldSegmentReleaseSparesNewSegmentOfSameBase: a segment removed by
// Truncate but still held by a reader must not, when the reader finally lets
// go, delete the files of a new segment created under the same name.
func TestOldSegmentReleaseSparesNewSegmentOfSameBase(t *testing.T) {
	clock := newClock()
	p, m := memPartition(t, small(clock))
	appendIDs(t, p, seq(0, 200)...)
	segs := p.Segments()
	require.Greater(t, len(segs), 3)
	lag := p.NewReader(segs[2].Base) // holds segment 2 once it reads
	var x log.Record
	ok, err := lag.Next(&x)
	require.NoError(t, err)
	require.True(t, ok)

	cut := segs[1].Base + 1
	require.NoError(t, p.Truncate(cut))
	appendIDs(t, p, seq(int(cut), 200)...) // same sizes: the same bases come back
	require.Equal(t, int64(200), p.EndOffset())
	lag.Close() // the old segment 2 goes now
	require.NoError(t, p.Sync())
	require.NoError(t, p.Close())

	p, err = Open(m, "topic-0", small(clock), true)
	require.NoError(t, err)
	require.Equal(t, int64(200), p.EndOffset(), "the new segments survived the old one's release")
	requireIDs(t, readRange(t, p, 0), 0, seq(0, 200))
	require.NoError(t, p.Close())
}

// TestTruncateInsideCompactedBatchKeepsOffsets: cutting a batch with gaps
// keeps every record at its own offset and ends the partition at the cut.
func TestTruncateInsideCompactedBatchKeepsOffsets(t *testing.T) {
	p, _, clock := compactedPartition(t)
	key := func(k string) []byte { return []byte(k) }
	var batch []log.Record
	for i, k := range []string{"a", "x", "b", "x", "c", "x", "d", "x"} {
		batch = append(batch, log.Record{Key: key(k), Value: []byte{byte('0' + i)}})
	}
	_, err := p.Append(batch) // offsets 0..7; x's 1, 3, 5 are superseded by 7
	require.NoError(t, err)
	appendIDs(t, p, seq(8, 120)...) // roll past it, so it can be cleaned
	_, err = p.Compact(clock.Now(), eager)
	require.NoError(t, err)

	require.NoError(t, p.Truncate(5))
	require.Equal(t, int64(5), p.EndOffset(), "the partition ends where it was cut")
	recs := readRange(t, p, 0)
	var got []int64
	for _, r := range recs {
		got = append(got, r.Offset)
	}
	require.Equal(t, []int64{0, 2, 4}, got, "a, b and c keep their offsets")
	off, err := p.Append([]log.Record{{Key: key("e"), Value: []byte("e")}})
	require.NoError(t, err)
	require.Equal(t, int64(5), off)
}
