package partition

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// TestDamagedCheckpoints puts garbage, or a start offset past the end of the
// log, in a partition's checkpoint files and opens it, cleanly and forcing
// recovery. Open never fails and never loses a record: it logs a warning
// naming the file, takes the conservative value (the first segment's start,
// every segment recovered, cleaning from the start), and removes or rewrites
// the file so that it is not distrusted again.
func TestDamagedCheckpoints(t *testing.T) {
	const n = 200
	for _, tc := range []struct {
		file, contents string
		compacted      bool
	}{
		{startOffsetFile, "99999999", false},
		{startOffsetFile, "garbage", false},
		{startOffsetFile, "-7", false},
		{startOffsetFile, "", false},
		{startOffsetFile, "\x00\x00\x00\x00", false},
		{recoveryPointFile, "12x", false},
		{recoveryPointFile, "", false},
		{cleanerOffsetFile, "not an offset", true},
	} {
		for _, clean := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s=%q/clean=%v", tc.file, tc.contents, clean), func(t *testing.T) {
				clock := newClock()
				cfg := small(clock)
				cfg.Compacted = tc.compacted
				p, m := memPartition(t, cfg)
				appendIDs(t, p, seq(0, n)...)
				require.Greater(t, len(p.Segments()), 3)
				if tc.compacted {
					_, err := p.Compact(clock.Now(), eager)
					require.NoError(t, err)
				}
				require.NoError(t, p.Close())
				path := filepath.Join("topic-0", tc.file)
				require.NoError(t, vfs.WriteFileAtomic(m, path, []byte(tc.contents)))

				var logged strings.Builder
				cfg.Logger = testLogger(&logged)
				p, err := Open(m, "topic-0", cfg, clean)
				require.NoError(t, err)
				require.Contains(t, logged.String(), "level=WARN")
				require.Contains(t, logged.String(), path)
				require.Zero(t, p.StartOffset())
				require.Equal(t, int64(n), p.EndOffset())
				requireIDs(t, readRange(t, p, 0), 0, seq(0, n))
				appendIDs(t, p, n)
				require.Equal(t, int64(n+1), p.EndOffset())
				if tc.compacted {
					_, err := p.Compact(clock.Now(), eager)
					require.NoError(t, err)
				}
				require.NoError(t, p.Close())
				_, err = readCheckpoint(m, "topic-0", tc.file, -1)
				require.NoError(t, err, "the file was removed or rewritten")

				logged.Reset()
				p, err = Open(m, "topic-0", cfg, clean)
				require.NoError(t, err)
				require.NotContains(t, logged.String(), "level=WARN")
				require.NoError(t, p.Close())
			})
		}
	}
}

// TestCheckpointsStillTrusted: a checkpoint that holds a usable offset is
// honoured, without a warning.
func TestCheckpointsStillTrusted(t *testing.T) {
	p, m := memPartition(t, small(newClock()))
	appendIDs(t, p, seq(0, 100)...)
	require.NoError(t, p.DeleteRecords(60))
	require.NoError(t, p.Close())
	var logged strings.Builder
	cfg := small(newClock())
	cfg.Logger = testLogger(&logged)
	for _, clean := range []bool{true, false} {
		p, err := Open(m, "topic-0", cfg, clean)
		require.NoError(t, err)
		require.Equal(t, int64(60), p.StartOffset())
		requireIDs(t, readRange(t, p, 60), 60, seq(60, 100))
		require.NoError(t, p.Close())
	}
	require.NotContains(t, logged.String(), "level=WARN")
}

// TestGarbledCleanerOffsetAtCompact: a cleaner-offset checkpoint damaged
// while the partition is open makes Compact clean from the start, not fail.
func TestGarbledCleanerOffsetAtCompact(t *testing.T) {
	p, m, clock := compactedPartition(t)
	var logged strings.Builder
	p.cfg.Logger = testLogger(&logged)
	written := writeKVs(t, p, newRand(3), 300)
	_, err := p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	for k, v := range writeKVs(t, p, newRand(4), 300) {
		written[k] = v
	}
	require.NoError(t, vfs.WriteFileAtomic(m, "topic-0/"+cleanerOffsetFile, []byte("#!?")))
	stats, err := p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	require.NotZero(t, stats.Superseded)
	require.Contains(t, logged.String(), "topic-0/"+cleanerOffsetFile)
	checkCompacted(t, p, written)
	off, err := readCheckpoint(m, "topic-0", cleanerOffsetFile, -1)
	require.NoError(t, err)
	require.Positive(t, off, "the cleaning wrote a new checkpoint")
	require.NoError(t, p.Close())
}

// TestGarbledSwapEnd: an interrupted swap whose swap-end checkpoint is
// garbage is completed as if there were none.
func TestGarbledSwapEnd(t *testing.T) {
	clock := newClock()
	p, m := memPartition(t, small(clock))
	appendIDs(t, p, seq(0, 200)...)
	segs := p.Segments()
	require.NoError(t, p.Close())
	// The first five batches of segment 1, as a rewrite of it would leave.
	log1, err := vfs.ReadFile(m, "topic-0/"+segment.FileName(segs[1].Base, segment.LogSuffix))
	require.NoError(t, err)
	cut := 0
	for range 5 {
		h, err := log.ReadHeader(log1[cut:])
		require.NoError(t, err)
		cut += h.Size()
	}
	swap := "topic-0/" + segment.FileName(segs[1].Base, segment.LogSuffix+segment.SwapSuffix)
	require.NoError(t, vfs.WriteFileAtomic(m, swap, log1[:cut]))
	require.NoError(t, vfs.WriteFileAtomic(m, "topic-0/"+swapEndFile, []byte("garbage")))

	var logged strings.Builder
	cfg := small(clock)
	cfg.Logger = testLogger(&logged)
	p, err = Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	require.Contains(t, logged.String(), "topic-0/"+swapEndFile)
	require.Equal(t, int64(200), p.EndOffset(), "the later segments stay, after a gap")
	requireIDsAtOwnOffsets(t, readRange(t, p, 0), append(seq(0, int(segs[1].Base+5)), seq(int(segs[2].Base), 200)...))
	_, err = m.Stat("topic-0/" + swapEndFile)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, p.Close())
}

// TestCheckpointTempsRemovedAtOpen: Open removes the temporary files of its
// own checkpoints and snapshots that a failed or interrupted write left,
// and a snapshot that fails its checks, and nothing else (Kafka's other
// files stay).
func TestCheckpointTempsRemovedAtOpen(t *testing.T) {
	p, m := memPartition(t, small(newClock()))
	appendIDs(t, p, 0, 1)
	require.NoError(t, p.Close())
	var ours []string
	for _, name := range checkpointNames {
		ours = append(ours, name+vfs.TempSuffix)
	}
	// A producer snapshot's temporary file, and a snapshot that fails its
	// checks, go too.
	ours = append(ours, segment.FileName(0, snapshotSuffix+vfs.TempSuffix), segment.FileName(2, snapshotSuffix))
	theirs := []string{
		"partition.metadata", "partition.metadata.tmp",
		"leader-epoch-checkpoint", "leader-epoch-checkpoint.tmp",
		segment.FileName(0, ".txnindex"),
		"notes.tmp",
	}
	for _, name := range append(ours, theirs...) {
		require.NoError(t, vfs.WriteFileAtomic(m, "topic-0/"+name, []byte("12")))
	}
	p, err := Open(m, "topic-0", small(newClock()), true)
	require.NoError(t, err)
	require.NoError(t, p.Close())
	names, err := m.ReadDir("topic-0")
	require.NoError(t, err)
	for _, name := range ours {
		require.NotContains(t, names, name)
	}
	for _, name := range theirs {
		require.Contains(t, names, name)
	}
}
