package partition

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// TestDamagedTimestampKeepsLaterRecords damages the max timestamp of a batch
// in the part of the active segment that a clean Open scans (after the
// offset index's last entry). The partition serves every other record, and
// Close must not write the damaged timestamp into the time index: that
// failed (the entry's offset lies below the time index's last one), the
// store then saw no clean shutdown, and the next Open's recovery cut the
// intact records after the damaged batch.
func TestDamagedTimestampKeepsLaterRecords(t *testing.T) {
	clock := newClock()
	cfg := small(clock)
	cfg.SegmentBytes = 64 << 10
	cfg.IndexIntervalBytes = 4096 // every batch lies in the scanned tail
	p, m := memPartition(t, cfg)
	for i := range 20 {
		appendIDs(t, p, i)
		clock.Add(time.Second)
	}
	wantMax := p.Segments()[0].MaxTimestamp
	require.NoError(t, p.Close())

	const victim = 10
	path := "topic-0/" + segment.FileName(0, segment.LogSuffix)
	f, err := m.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	pos := batchPosition(t, f, victim)
	_, err = f.WriteAt(binary.BigEndian.AppendUint64(nil, 1<<62), pos+35)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	var logged strings.Builder
	cfg.Logger = testLogger(&logged)
	p, err = Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	require.Equal(t, wantMax, p.Segments()[0].MaxTimestamp)
	requireAllBut(t, p, 20, victim)
	require.Contains(t, logged.String(), "level=WARN")
	require.Contains(t, logged.String(), segment.FileName(0, segment.LogSuffix))
	require.NoError(t, p.Close(), "Close writes no entry from the damaged batch")

	p, err = Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	require.Equal(t, int64(20), p.EndOffset())
	require.Equal(t, wantMax, p.Segments()[0].MaxTimestamp)
	requireAllBut(t, p, 20, victim)
	require.NoError(t, p.Close())
}

// batchPosition returns the position of batch i of the .log file f.
func batchPosition(t *testing.T, f vfs.File, i int) int64 {
	t.Helper()
	var pos int64
	hdr := make([]byte, log.BatchHeaderSize)
	for range i {
		_, err := f.ReadAt(hdr, pos)
		require.NoError(t, err)
		h, err := log.ReadHeader(hdr)
		require.NoError(t, err)
		pos += int64(h.Size())
	}
	return pos
}

// requireAllBut checks that every record of ids 0..n-1 but the damaged one
// reads back intact at its offset, and that the damaged one is reported.
func requireAllBut(t *testing.T, p *Partition, n, damaged int) {
	t.Helper()
	for id := range n {
		r := p.NewReader(int64(id))
		var x log.Record
		ok, err := r.Next(&x)
		if id == damaged {
			require.ErrorIs(t, err, segment.ErrCorrupt)
		} else {
			require.NoError(t, err, "offset %d", id)
			require.True(t, ok, "offset %d", id)
			require.Equal(t, int64(id), x.Offset)
			require.Equal(t, rec(id).Value, x.Value, "offset %d", id)
		}
		r.Close()
	}
}

// TestMissingIndexRebuilt removes the .index or the .timeindex of a sealed
// segment or of the active one and opens the partition, cleanly or forcing
// recovery: Open rebuilds the file from the log (rather than failing with
// ENOENT or taking the missing file for an empty index), says so, and loses
// nothing; the rebuilt file is the one that was lost.
func TestMissingIndexRebuilt(t *testing.T) {
	for _, kind := range []string{segment.IndexSuffix, segment.TimeIndexSuffix} {
		for _, which := range []string{"sealed", "active"} {
			for _, clean := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%s/clean=%v", kind, which, clean), func(t *testing.T) {
					clock := newClock()
					p, m := memPartition(t, small(clock))
					for i := range 150 {
						appendIDs(t, p, i)
						clock.Add(time.Second)
					}
					segs := p.Segments()
					require.Greater(t, len(segs), 3)
					require.NoError(t, p.Close())
					victim := segs[1]
					if which == "active" {
						victim = segs[len(segs)-1]
					}
					path := "topic-0/" + segment.FileName(victim.Base, kind)
					want, err := vfs.ReadFile(m, path)
					require.NoError(t, err)
					require.NotEmpty(t, want)
					require.NoError(t, m.Remove(path))

					var logged strings.Builder
					cfg := small(clock)
					cfg.Logger = testLogger(&logged)
					p, err = Open(m, "topic-0", cfg, clean)
					require.NoError(t, err)
					require.Equal(t, segs, p.Segments())
					requireIDs(t, readRange(t, p, 0), 0, seq(0, 150))
					require.Contains(t, logged.String(), "level=WARN")
					require.Contains(t, logged.String(), path)
					require.NoError(t, p.Close())
					got, err := vfs.ReadFile(m, path)
					require.NoError(t, err)
					require.Equal(t, want, got, "the rebuilt index is the one that was lost")

					p, err = Open(m, "topic-0", cfg, true)
					require.NoError(t, err)
					appendIDs(t, p, 150)
					requireIDs(t, readRange(t, p, 0), 0, seq(0, 151))
					require.NoError(t, p.Close())
				})
			}
		}
	}
}
