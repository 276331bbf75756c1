package segment

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// TestNextInto reads a segment's batches with NextInto into a header full
// of garbage: each header is the one Next returns, and at the limit and at
// the end the header is zeroed as Next's is.
func TestNextInto(t *testing.T) {
	fx, _ := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 100, Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 256})
	require.NoError(t, err)
	defer s.Close()
	written := appendRandom(t, s, rand.New(rand.NewPCG(3, 4)), 20, 10, 50)
	garbage := log.BatchHeader{BaseOffset: 7, Length: 9, NumRecords: 11, ProducerID: 13}

	a, err := s.CursorAt(0)
	require.NoError(t, err)
	b := a
	for _, w := range written {
		wantH, want, err := a.Next()
		require.NoError(t, err)
		h := garbage
		got, err := b.NextInto(&h)
		require.NoError(t, err)
		require.Equal(t, w.bytes, got)
		require.Equal(t, want, got)
		require.Equal(t, wantH, h)
	}
	h := garbage
	got, err := b.NextInto(&h)
	require.NoError(t, err)
	require.Nil(t, got)
	require.Zero(t, h, "at the end")

	c, err := s.CursorAt(0)
	require.NoError(t, err)
	c.SetLimit(written[0].recs[0].Offset)
	h = garbage
	got, err = c.NextInto(&h)
	require.NoError(t, err)
	require.Nil(t, got)
	require.True(t, c.AtLimit())
	require.Zero(t, h, "at the limit")
}
