package partition

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// damageAt overwrites bytes of the segment file with base at pos.
func damageAt(t *testing.T, m *vfs.Mem, base, pos int64, b []byte) {
	t.Helper()
	f, err := m.OpenFile(filepath.Join("topic-0", segment.FileName(base, segment.LogSuffix)), os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b, pos)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestAppendsAfterDamageSurviveACrash: a clean Open that steps over damage
// in the active segment rolls to a new segment, so records appended and
// synced afterwards are not lost to the recovery of a later crash, which
// cuts the damaged segment at the damage.
func TestAppendsAfterDamageSurviveACrash(t *testing.T) {
	cfg := small(newClock())
	cfg.SegmentBytes, cfg.IndexIntervalBytes = 1<<20, 1<<20 // one segment, its tail all scanned at Open
	p, m := memPartition(t, cfg)
	appendIDs(t, p, seq(0, 20)...)
	require.NoError(t, p.Close())
	pos := int64(0)
	for range 5 { // the header of the batch of id 5: a length that does not read
		h, err := log.ReadHeader(readFileAt(t, m, pos))
		require.NoError(t, err)
		pos += int64(h.Size())
	}
	damageAt(t, m, 0, pos+8, binary.BigEndian.AppendUint32(nil, 0x7fff0000))

	p, err := Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	appendIDs(t, p, seq(20, 30)...)
	require.NoError(t, p.Sync())
	require.Len(t, p.Segments(), 2, "the damaged segment was sealed; appends go to a new one")

	p, err = Open(m.Crash(), "topic-0", cfg, false)
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, int64(30), p.EndOffset(), "the synced appends survive")
	requireIDs(t, readRange(t, p, 20), 20, seq(20, 30))
}

// readFileAt returns the bytes of segment 0's log from pos on.
func readFileAt(t *testing.T, m *vfs.Mem, pos int64) []byte {
	t.Helper()
	data, err := vfs.ReadFile(m, filepath.Join("topic-0", segment.FileName(0, segment.LogSuffix)))
	require.NoError(t, err)
	return data[pos:]
}

// TestLostRecoveryPointKeepsLaterSegments: with the recovery point
// damaged, an unclean Open recovers every segment; damage in the first one
// cuts that segment's tail, and the later segments, which pass their own
// checks, stay.
func TestLostRecoveryPointKeepsLaterSegments(t *testing.T) {
	cfg := small(newClock())
	p, m := memPartition(t, cfg)
	appendIDs(t, p, seq(0, 200)...)
	require.NoError(t, p.Close())
	segs := p.Segments()
	require.Greater(t, len(segs), 3)
	damageAt(t, m, segs[0].Base, 300, []byte{0xff, 0xfe, 0xfd})
	require.NoError(t, vfs.WriteFileAtomic(m, filepath.Join("topic-0", recoveryPointFile), []byte("garbage")))

	p, err := Open(m, "topic-0", cfg, false)
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, int64(200), p.EndOffset())
	require.Len(t, p.Segments(), len(segs))
	requireIDs(t, readRange(t, p, segs[1].Base), segs[1].Base, seq(int(segs[1].Base), 200))
}

// TestCheckpointReadErrorFailsOpen: a start offset the disk fails to read
// once fails Open and is kept, rather than distrusted and removed, which
// would bring the records DeleteRecords removed back for good.
func TestCheckpointReadErrorFailsOpen(t *testing.T) {
	cfg := small(newClock())
	p, m := memPartition(t, cfg)
	appendIDs(t, p, seq(0, 10)...)
	require.NoError(t, p.DeleteRecords(5))
	require.NoError(t, p.Close())

	failed := false
	m.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpOpen && strings.HasSuffix(path, startOffsetFile) && !failed {
			failed = true
			return vfs.ErrInjected
		}
		return nil
	})
	_, err := Open(m, "topic-0", cfg, true)
	require.ErrorIs(t, err, vfs.ErrInjected)
	m.SetInjector(nil)
	p, err = Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, int64(5), p.StartOffset())
}

// TestCleanerReadsWhatThePartitionTook: with a MaxBatchBytes that raises
// the partition's decompression limit past the default 64 MiB, the cleaner
// reads (and compacts away) a superseded batch that decompresses to more
// than 64 MiB, instead of keeping it as unreadable.
func TestCleanerReadsWhatThePartitionTook(t *testing.T) {
	cfg := small(newClock())
	cfg.Compacted = true
	cfg.SegmentBytes, cfg.MaxBatchBytes = 3<<19, 3<<19 // the limit: 96 MiB
	p, _ := memPartition(t, cfg)
	defer p.Close()
	big, err := log.EncodeBatch(nil, []log.Record{{Key: []byte("k"), Value: make([]byte, 70<<20)}},
		log.BatchOptions{Now: cfg.Now().UnixMilli(), Compression: log.Zstd})
	require.NoError(t, err)
	require.Less(t, len(big), 64<<10)
	_, err = p.AppendRawBatch(big)
	require.NoError(t, err)
	for i := 0; p.Segments()[0].Base == 0 && len(p.Segments()) < 3; i++ { // a newer k, past a roll
		_, err := p.Append([]log.Record{{Key: []byte("k"), Value: make([]byte, 100<<10)}})
		require.NoError(t, err)
	}
	st, err := p.Compact(cfg.Now(), eager)
	require.NoError(t, err)
	require.Positive(t, st.Superseded)
	recs := readRange(t, p, 0)
	require.NotEmpty(t, recs)
	require.Less(t, len(recs[0].Value), 1<<20, "the superseded 70 MiB value went")
}

// TestOversizedBatchRefusedBeforeDecompressing: AppendRawBatch refuses a
// batch over MaxBatchBytes before it decompresses anything, so a small
// hostile batch cannot make it allocate its decompressed size first.
func TestOversizedBatchRefusedBeforeDecompressing(t *testing.T) {
	cfg := small(newClock())
	p, _ := memPartition(t, cfg)
	defer p.Close()
	noise := make([]byte, 3<<10)
	rng := newRand(1)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	b, err := log.EncodeBatch(nil, []log.Record{{Value: noise}, {Value: make([]byte, 32<<20)}},
		log.BatchOptions{Now: cfg.Now().UnixMilli(), Compression: log.Zstd})
	require.NoError(t, err)
	require.Greater(t, len(b), cfg.MaxBatchBytes)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = p.AppendRawBatch(b)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, ErrBatchTooLarge)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "nothing was decompressed")
}
