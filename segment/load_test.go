package segment

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDamagedTimestampInScannedTail damages the max timestamp field (header
// bytes 35..42, outside what a header check covers but inside the CRC) of a
// batch that Open scans after the offset index's last entry. The damaged
// value must not become the segment's max timestamp nor reach the time index
// when the segment is closed: the batch fails its CRC, reads of it report
// ErrCorrupt, every other batch stays readable, Close succeeds, and the
// reopened segment has the indexes it had before the damage.
func TestDamagedTimestampInScannedTail(t *testing.T) {
	const batches = 20
	// One index interval larger than the segment: every batch lies in the
	// tail that Open scans.
	cfg := Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 64 << 10}
	for _, tc := range []struct {
		name    string
		victim  int // which batch is damaged
		ts      func(i int) int64
		damaged int64 // the max timestamp written over the victim's
	}{
		{"rising/middle/huge", 10, func(i int) int64 { return 1_700_000_000_000 + int64(i)*1000 }, 1<<62 + 5},
		{"rising/last/huge", batches - 1, func(i int) int64 { return 1_700_000_000_000 + int64(i)*1000 }, 1<<62 + 5},
		{"rising/middle/just-above", 10, func(i int) int64 { return 1_700_000_000_000 + int64(i)*1000 }, 1_700_000_000_000 + batches*1000},
		{"equal/middle/huge", 10, func(int) int64 { return 1_700_000_000_000 }, 1<<62 + 5},
		{"equal/first/huge", 0, func(int) int64 { return 1_700_000_000_000 }, 1<<62 + 5},
	} {
		for _, writable := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/writable=%v", tc.name, writable), func(t *testing.T) {
				eachFS(t, func(t *testing.T, fx fixture) {
					s, err := Create(fx.fsys, fx.dir, 0, cfg)
					require.NoError(t, err)
					var written []writtenBatch
					victimPos := int64(0)
					for i := range batches {
						recs := makeRecords(int64(i), 1, 50, tc.ts(i))
						b := encode(t, recs)
						if i < tc.victim {
							victimPos += int64(len(b))
						}
						require.NoError(t, s.Append(b))
						written = append(written, writtenBatch{b, recs})
					}
					require.NoError(t, s.Close())
					wantOffsets, wantTimes := reopenEntries(t, fx, cfg)
					// The segment is smaller than an index interval, so it
					// has no time index to remember the damaged batch's
					// timestamp by: its max is that of the intact batches.
					require.Empty(t, wantTimes)
					wantMax := int64(-1)
					for i := range batches {
						if i != tc.victim {
							wantMax = max(wantMax, tc.ts(i))
						}
					}

					path := filepath.Join(fx.dir, FileName(0, LogSuffix))
					f, err := fx.fsys.OpenFile(path, os.O_RDWR, 0)
					require.NoError(t, err)
					_, err = f.WriteAt(binary.BigEndian.AppendUint64(nil, uint64(tc.damaged)), victimPos+35)
					require.NoError(t, err)
					require.NoError(t, f.Close())

					s, err = Open(fx.fsys, fx.dir, 0, cfg, writable)
					require.NoError(t, err)
					require.Equal(t, wantMax, s.MaxTimestamp(), "the damaged batch's timestamp is not the segment's")
					require.ErrorIs(t, s.Damaged(), ErrCorrupt, "Open says what it found")
					for i, b := range written {
						got, err := s.Read(nil, int64(i), 1)
						if i == tc.victim {
							require.ErrorIs(t, err, ErrCorrupt)
							continue
						}
						require.NoError(t, err, "batch %d", i)
						require.Equal(t, b.bytes, got, "batch %d", i)
					}
					require.NoError(t, s.Close(), "closing writes no entry from the damaged batch")

					gotOffsets, gotTimes := reopenEntries(t, fx, cfg)
					require.Equal(t, wantOffsets, gotOffsets)
					require.Equal(t, wantTimes, gotTimes, "the time index holds no damaged timestamp")
					s, err = Open(fx.fsys, fx.dir, 0, cfg, true)
					require.NoError(t, err)
					require.Equal(t, wantMax, s.MaxTimestamp())
					require.Equal(t, int64(batches), s.NextOffset())
					require.NoError(t, s.Close())
				})
			})
		}
	}
}

// TestTruncateIgnoresDamagedTimestamp: the max timestamp that Truncate
// recomputes from the batches after the offset index's last entry comes
// from batches whose CRC holds only.
func TestTruncateIgnoresDamagedTimestamp(t *testing.T) {
	cfg := Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 64 << 10}
	fx, m := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	victimPos := int64(0)
	for i := range 10 {
		b := encode(t, makeRecords(int64(i), 1, 50, 1_700_000_000_000+int64(i)))
		if i < 5 {
			victimPos += int64(len(b))
		}
		require.NoError(t, s.Append(b))
	}
	require.NoError(t, s.Close())
	path := filepath.Join(fx.dir, FileName(0, LogSuffix))
	data := readFile(t, m, path)
	binary.BigEndian.PutUint64(data[victimPos+35:], 1<<62)
	writeFile(t, m, path, data)

	s, err = Open(fx.fsys, fx.dir, 0, cfg, true)
	require.NoError(t, err)
	require.NoError(t, s.truncate(8))
	require.Equal(t, int64(1_700_000_000_007), s.MaxTimestamp())
	require.NoError(t, s.Close())
	_, times := reopenEntries(t, fx, cfg)
	require.Empty(t, times, "a segment smaller than an index interval has no time index")
	s, err = Open(fx.fsys, fx.dir, 0, cfg, false)
	require.NoError(t, err)
	require.Equal(t, int64(1_700_000_000_007), s.MaxTimestamp())
	require.NoError(t, s.Close())
}

// TestRewriteRefusesDamagedBatch: Rewrite does not copy a batch whose CRC
// fails into a segment that would trust it.
func TestRewriteRefusesDamagedBatch(t *testing.T) {
	cfg := Config{MaxBytes: testMaxBytes, IndexIntervalBytes: 64 << 10}
	fx, m := memFixture(t)
	s, err := Create(fx.fsys, fx.dir, 0, cfg)
	require.NoError(t, err)
	var written []writtenBatch
	victimPos := int64(0)
	for i := range 10 {
		recs := makeRecords(int64(i), 1, 50, 1_700_000_000_000+int64(i))
		b := encode(t, recs)
		if i < 5 {
			victimPos += int64(len(b))
		}
		require.NoError(t, s.Append(b))
		written = append(written, writtenBatch{b, recs})
	}
	require.NoError(t, s.Close())
	path := filepath.Join(fx.dir, FileName(0, LogSuffix))
	data := readFile(t, m, path)
	data[victimPos+35] ^= 0x40
	writeFile(t, m, path, data)

	s, err = Open(fx.fsys, fx.dir, 0, cfg, true)
	require.NoError(t, err)
	before, err := m.ReadDir(fx.dir)
	require.NoError(t, err)
	_, err = s.Rewrite(8, nil)
	require.ErrorIs(t, err, ErrCorrupt)
	require.Equal(t, data, readFile(t, m, path), "the segment's files are as they were")
	names, err := m.ReadDir(fx.dir)
	require.NoError(t, err)
	require.Equal(t, before, names, "no temporary files")

	n, err := s.Rewrite(5, nil)
	require.NoError(t, err, "the batches before the damaged one can be kept")
	requireRecords(t, written[:5], 0, readAll(t, n, 0, 1<<20))
	require.NoError(t, n.Close())
	require.NoError(t, s.Close())
}

// reopenEntries opens the segment read-only and returns its index entries.
func reopenEntries(t *testing.T, fx fixture, cfg Config) (offsets, times [][2]int64) {
	t.Helper()
	s, err := Open(fx.fsys, fx.dir, 0, cfg, false)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	return indexEntries(s)
}
