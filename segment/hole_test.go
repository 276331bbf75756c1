package segment

import (
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// TestOpenStepsOverDamagedHeader: a damaged length field in the batches a
// trusted Open scans (after the last index entry) is stepped over to the
// next batch that reads, instead of failing Open (whose caller would
// recover the segment and cut every record after the damage): reads reach
// the damage and fail there, lookups past it jump it, and nothing after
// it is lost.
func TestOpenStepsOverDamagedHeader(t *testing.T) {
	fx, m := memFixture(t)
	cfg := Config{MaxBytes: 64 << 10, IndexIntervalBytes: 1 << 20, MaxIndexBytes: 4096} // no index entry: Open scans everything
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(8, 8)), 12, 3, 40)
	require.NoError(t, s.Close())
	path := filepath.Join(fx.dir, FileName(0, LogSuffix))
	data := readFile(t, m, path)
	victim := 5
	pos := len(concat(written[:victim]))
	binary.BigEndian.PutUint32(data[pos+8:], 0x7fff0000) // a length far past the end
	writeFile(t, m, path, data)

	s, err = Open(m, fx.dir, 0, cfg, false)
	require.NoError(t, err, "Open steps over the damage")
	defer s.Close()
	require.ErrorIs(t, s.Damaged(), ErrCorrupt)
	last := written[len(written)-1].recs
	require.Equal(t, last[len(last)-1].Offset+1, s.NextOffset(), "the batches after the damage count")

	b, err := s.Read(nil, 0, 1<<20)
	require.NoError(t, err, "a read returns the intact batches before the damage")
	require.Equal(t, concat(written[:victim]), b)
	at := written[victim].recs[0].Offset
	_, err = s.Read(nil, at, 1<<20)
	require.ErrorIs(t, err, ErrCorrupt, "a read that starts at the damage fails")
	after := written[victim+1].recs[0].Offset
	b, err = s.Read(nil, after, 1<<20)
	require.NoError(t, err, "a lookup past the damage jumps it")
	h, err := log.ReadHeader(b)
	require.NoError(t, err)
	require.Equal(t, after, h.BaseOffset)
	requireRecords(t, written[victim+1:], after, readAll(t, s, after, 1<<20))
}
