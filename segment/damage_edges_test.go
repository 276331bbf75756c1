package segment

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// legacyV0 returns a magic-0 message at offset with a null key and value:
// 26 bytes, the smallest message a segment holds.
func legacyV0(offset int64) []byte {
	b := make([]byte, 26)
	binary.BigEndian.PutUint64(b, uint64(offset))
	binary.BigEndian.PutUint32(b[8:], 14)
	binary.BigEndian.PutUint32(b[18:], 0xffffffff)
	binary.BigEndian.PutUint32(b[22:], 0xffffffff)
	binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	return b
}

// TestCRCMarksPerSmallestMessage: legacy messages of 26 bytes start two to
// a 32-byte block; checking one must not vouch for its neighbour, whose
// damage a read still reports.
func TestCRCMarksPerSmallestMessage(t *testing.T) {
	fx, m := memFixture(t)
	var data []byte
	for i := range 12 {
		data = append(data, legacyV0(int64(i))...)
	}
	data[6*26+17] ^= 0x07 // message 6, inside what its CRC covers
	writeFile(t, m, filepath.Join(fx.dir, FileName(0, LogSuffix)), data)
	writeFile(t, m, filepath.Join(fx.dir, FileName(0, IndexSuffix)), nil)
	writeFile(t, m, filepath.Join(fx.dir, FileName(0, TimeIndexSuffix)), nil)
	s, err := Open(m, fx.dir, 0, Config{}, false)
	require.NoError(t, err)
	defer s.Close()
	b, err := s.Read(nil, 5, 1)
	require.NoError(t, err)
	require.Len(t, b, 26)
	_, err = s.Read(nil, 6, 1)
	require.ErrorIs(t, err, log.ErrCorrupt, "message 6 is damaged, whatever was read before it")
}

// TestLookupJumpsHoleWithPlausibleHeader: a base offset that runs
// backwards (outside the CRC) makes Open step over the batch as a hole,
// though its header reads; lookups of the records after it jump it, and
// one of the records it held fails.
func TestLookupJumpsHoleWithPlausibleHeader(t *testing.T) {
	fx, m := memFixture(t)
	cfg := Config{MaxBytes: 64 << 10, IndexIntervalBytes: 1 << 20, MaxIndexBytes: 4096}
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(8, 8)), 12, 3, 40)
	require.NoError(t, s.Close())
	path := filepath.Join(fx.dir, FileName(0, LogSuffix))
	data := readFile(t, m, path)
	const victim = 5
	binary.BigEndian.PutUint64(data[len(concat(written[:victim])):], 0)
	writeFile(t, m, path, data)

	s, err = Open(m, fx.dir, 0, cfg, false)
	require.NoError(t, err)
	defer s.Close()
	require.ErrorIs(t, s.Damaged(), log.ErrCorrupt)
	after := written[victim+1].recs[0].Offset
	b, err := s.Read(nil, after, 1<<20)
	require.NoError(t, err, "a lookup past the hole jumps it")
	require.Equal(t, concat(written[victim+1:]), b)
	_, err = s.Read(nil, written[victim].recs[0].Offset, 1<<20)
	require.ErrorIs(t, err, log.ErrCorrupt)
}

// TestTruncateRefusesHoles: Truncate of a segment holding a hole fails with
// ErrCorrupt and changes nothing: the file is not cut, size and next offset
// stay, and the batches past the hole still read.
func TestTruncateRefusesHoles(t *testing.T) {
	fx, m := memFixture(t)
	cfg := Config{MaxBytes: 64 << 10, IndexIntervalBytes: 1 << 20, MaxIndexBytes: 4096}
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	written := appendRandom(t, s, rand.New(rand.NewPCG(8, 8)), 12, 3, 40)
	require.NoError(t, s.Close())
	path := filepath.Join(fx.dir, FileName(0, LogSuffix))
	data := readFile(t, m, path)
	binary.BigEndian.PutUint32(data[len(concat(written[:5]))+8:], 0x7fff0000) // a length that does not read
	writeFile(t, m, path, data)

	s, err = Open(m, fx.dir, 0, cfg, true)
	require.NoError(t, err)
	defer s.Close()
	require.Error(t, s.Damaged())
	size, next := s.Size(), s.NextOffset()
	require.ErrorIs(t, s.truncate(written[8].recs[0].Offset), log.ErrCorrupt)
	require.Equal(t, size, s.Size())
	require.Equal(t, next, s.NextOffset())
	require.GreaterOrEqual(t, len(readFile(t, m, path)), len(data), "the file is not cut")
	b, err := s.Read(nil, written[9].recs[0].Offset, 1<<20)
	require.NoError(t, err)
	require.Equal(t, concat(written[9:]), b)
}
