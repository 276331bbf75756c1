package partition

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

func TestAppendReadAcrossRolls(t *testing.T) {
	clock := newClock()
	p, m := memPartition(t, small(clock))
	offs := appendIDs(t, p, seq(0, 500)...)
	for i, off := range offs {
		require.Equal(t, int64(i), off, "offsets are dense from zero")
	}
	require.Equal(t, int64(500), p.EndOffset())
	require.Equal(t, int64(0), p.StartOffset())
	segs := p.Segments()
	require.Greater(t, len(segs), 5, "4 KiB segments roll")
	for i := 1; i < len(segs); i++ {
		require.Equal(t, segs[i-1].Next, segs[i].Base, "segments are contiguous")
		require.LessOrEqual(t, segs[i-1].Bytes, int64(4<<10))
	}
	for _, from := range []int64{0, 1, 77, 250, 499, 500} {
		requireIDs(t, readRange(t, p, from), from, seq(int(from), 500))
	}

	// A clean close and reopen sees the same.
	require.NoError(t, p.Close())
	p, err := Open(m, "topic-0", small(clock), true)
	require.NoError(t, err)
	require.Equal(t, int64(500), p.EndOffset())
	require.Equal(t, len(segs), len(p.Segments()))
	requireIDs(t, readRange(t, p, 0), 0, seq(0, 500))
	offs = appendIDs(t, p, 500, 501)
	require.Equal(t, []int64{500, 501}, offs)
	require.NoError(t, p.Close())
}

func TestAppendSeveralRecords(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	recs := []log.Record{rec(0), rec(1), rec(2)}
	off, err := p.Append(recs)
	require.NoError(t, err)
	require.Equal(t, int64(0), off)
	off, err = p.Append([]log.Record{rec(3)})
	require.NoError(t, err)
	require.Equal(t, int64(3), off)
	requireIDs(t, readRange(t, p, 0), 0, seq(0, 4))
	requireIDs(t, readRange(t, p, 1), 1, seq(1, 4)) // a read inside a batch skips its earlier records
}

// TestAppendRawBatchFollowsPartitionRules appends pre-encoded batches: a
// compacted partition refuses a key-less record, CreateTime refuses a batch
// stamped too far ahead, and LogAppendTime stamps the batch with the append
// time; refused batches change nothing.
func TestAppendRawBatchFollowsPartitionRules(t *testing.T) {
	clock := newClock()
	encode := func(recs ...log.Record) []byte {
		b, err := log.EncodeBatch(nil, recs, log.BatchOptions{Now: clock.Now().UnixMilli()})
		require.NoError(t, err)
		return b
	}

	cfg := small(clock)
	cfg.Compacted = true
	p, _ := memPartition(t, cfg)
	_, err := p.AppendRawBatch(encode(rec(0), log.Record{Value: []byte("no key")}))
	require.ErrorIs(t, err, ErrNoKey)
	require.Zero(t, p.EndOffset())
	_, err = p.AppendRawBatch(encode(rec(0), rec(1)))
	require.NoError(t, err)
	require.NoError(t, p.Close())

	p, _ = memPartition(t, small(clock))
	ahead := rec(0)
	ahead.Timestamp = clock.Now().Add(2 * time.Hour)
	_, err = p.AppendRawBatch(encode(rec(0), ahead))
	require.ErrorIs(t, err, ErrTimestampTooFarAhead)
	require.Zero(t, p.EndOffset())
	require.NoError(t, p.Close())

	cfg = small(clock)
	cfg.TimestampType = log.LogAppendTime
	p, _ = memPartition(t, cfg)
	old := rec(0)
	old.Timestamp = clock.Now().Add(-time.Hour)
	_, err = p.AppendRawBatch(encode(old, rec(1)))
	require.NoError(t, err)
	recs := readRange(t, p, 0)
	require.Len(t, recs, 2)
	for _, r := range recs {
		require.Equal(t, clock.Now().UnixMilli(), r.Timestamp.UnixMilli(), "the append time, not the record's")
	}
	require.NoError(t, p.Close())
}

func TestBadInputChangesNothing(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	appendIDs(t, p, 0, 1, 2)

	_, err := p.Append(nil)
	require.ErrorIs(t, err, ErrEmptyBatch)
	_, err = p.Append([]log.Record{{Value: make([]byte, 3000)}})
	require.ErrorIs(t, err, ErrBatchTooLarge)
	require.Contains(t, err.Error(), "2048", "the error names the limit")
	_, err = p.AppendRawBatch([]byte("definitely not a batch, not even close to one; no, not at all, nope"))
	require.ErrorIs(t, err, log.ErrCorrupt)
	// A damaged record under a correct CRC: the first record's attributes
	// byte (after its one-byte length) must be 0.
	bad, err := log.EncodeBatch(nil, []log.Record{rec(3), rec(4)}, log.BatchOptions{})
	require.NoError(t, err)
	bad[log.BatchHeaderSize+1] = 1
	binary.BigEndian.PutUint32(bad[17:21], crc32.Checksum(bad[21:], crc32.MakeTable(crc32.Castagnoli)))
	_, err = log.CheckBatch(bad)
	require.NoError(t, err, "the CRC is right")
	_, err = p.AppendRawBatch(bad)
	require.ErrorIs(t, err, log.ErrCorrupt)

	for _, off := range []int64{-1, 4, 1000} {
		_, err := p.ReadBatches(nil, off, 100)
		require.ErrorIs(t, err, ErrOutOfRange)
		require.Contains(t, err.Error(), "[0, 3]", "the error states the valid range")
	}
	require.Equal(t, int64(3), p.EndOffset())
	requireIDs(t, readRange(t, p, 0), 0, seq(0, 3))

	_, err = Open(vfs.NewMem(), "x-0", Config{SegmentBytes: 10}, false)
	require.ErrorIs(t, err, ErrInvalidConfig)
	_, err = Open(vfs.NewMem(), "x-0", Config{SegmentBytes: 1000, MaxBatchBytes: 2000}, false)
	require.ErrorIs(t, err, ErrInvalidConfig)
}

func TestReadAtEndWaits(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	appendIDs(t, p, 0)
	got, err := p.ReadBatches(nil, 1, 100)
	require.NoError(t, err)
	require.Empty(t, got, "reading at the end offset returns nothing")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, p.Wait(ctx, 1), context.DeadlineExceeded)

	done := make(chan error, 1)
	go func() { done <- p.Wait(context.Background(), 1) }()
	appendIDs(t, p, 1)
	require.NoError(t, <-done)

	// Close wakes waiters with ErrClosed.
	go func() { done <- p.Wait(context.Background(), 10) }()
	require.NoError(t, p.Close())
	require.ErrorIs(t, <-done, ErrClosed)
}

func TestRecordsTails(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	appendIDs(t, p, seq(0, 10)...)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan log.Record)
	errc := make(chan error, 1)
	go func() {
		for r, err := range p.Records(ctx, 5) {
			if err != nil {
				errc <- err
				return
			}
			r.Key, r.Value = append([]byte(nil), r.Key...), append([]byte(nil), r.Value...)
			got <- r
		}
	}()
	var recs []log.Record
	for range 5 {
		recs = append(recs, <-got)
	}
	appendIDs(t, p, seq(10, 20)...)
	for range 10 {
		recs = append(recs, <-got)
	}
	requireIDs(t, recs, 5, seq(5, 20))
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	require.NoError(t, p.Close())
}

func TestTimestamps(t *testing.T) {
	clock := newClock()
	now := clock.Now().UnixMilli()
	t.Run("create time", func(t *testing.T) {
		p, _ := memPartition(t, small(clock))
		r := rec(0)
		r.Timestamp = time.UnixMilli(1234)
		_, err := p.Append([]log.Record{r, rec(1)})
		require.NoError(t, err)
		recs := readRange(t, p, 0)
		require.Equal(t, int64(1234), recs[0].Timestamp.UnixMilli(), "the record's own timestamp")
		require.Equal(t, now, recs[1].Timestamp.UnixMilli(), "zero means the append time")
	})
	t.Run("log append time", func(t *testing.T) {
		cfg := small(clock)
		cfg.TimestampType = log.LogAppendTime
		p, _ := memPartition(t, cfg)
		r := rec(0)
		r.Timestamp = time.UnixMilli(1234)
		_, err := p.Append([]log.Record{r})
		require.NoError(t, err)
		require.Equal(t, now, readRange(t, p, 0)[0].Timestamp.UnixMilli())
	})
}

func TestOffsetForTimestamp(t *testing.T) {
	clock := newClock()
	p, _ := memPartition(t, small(clock))
	base := clock.Now().UnixMilli()
	for i := range 300 {
		clock.Add(10 * time.Millisecond)
		appendIDs(t, p, i)
	}
	require.Greater(t, len(p.Segments()), 3)
	for _, tc := range []struct {
		ts   int64
		want int64
	}{{0, 0}, {base + 10, 0}, {base + 11, 1}, {base + 1500, 149}, {base + 3000, 299}} {
		off, ts, found, err := p.OffsetForTimestamp(tc.ts)
		require.NoError(t, err)
		require.True(t, found, "ts %d", tc.ts)
		require.Equal(t, tc.want, off, "ts %d", tc.ts)
		require.GreaterOrEqual(t, ts, tc.ts)
	}
	_, _, found, err := p.OffsetForTimestamp(base + 3001)
	require.NoError(t, err)
	require.False(t, found)

	require.NoError(t, p.DeleteRecords(100))
	off, _, found, err := p.OffsetForTimestamp(0)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, int64(100), off, "the search starts at the start offset")
}

func TestRollByRecordAge(t *testing.T) {
	clock := newClock()
	cfg := small(clock)
	cfg.SegmentBytes = 1 << 20
	cfg.MaxBatchBytes = 1 << 10
	cfg.SegmentAge = time.Hour
	p, _ := memPartition(t, cfg)
	appendIDs(t, p, 0, 1)
	clock.Add(59 * time.Minute)
	appendIDs(t, p, 2)
	require.Len(t, p.Segments(), 1)
	clock.Add(2 * time.Minute)
	appendIDs(t, p, 3)
	require.Len(t, p.Segments(), 2, "a batch an hour later than the segment's first rolls it")
	require.Equal(t, int64(3), p.Segments()[1].Base)

	// Record time, not the wall clock: an old timestamp does not roll.
	clock.Add(24 * time.Hour)
	r := rec(4)
	r.Timestamp = time.UnixMilli(p.Segments()[1].MaxTimestamp)
	_, err := p.Append([]log.Record{r})
	require.NoError(t, err)
	require.Len(t, p.Segments(), 2)
}

func TestRollWhenIndexFull(t *testing.T) {
	cfg := small(newClock())
	cfg.SegmentBytes = 1 << 20
	cfg.MaxBatchBytes = 1 << 10
	cfg.IndexIntervalBytes = 1
	cfg.MaxIndexBytes = 64 // 8 offset entries, 5 time entries
	p, _ := memPartition(t, cfg)
	appendIDs(t, p, seq(0, 40)...)
	require.Greater(t, len(p.Segments()), 3, "full indexes roll the segment")
	requireIDs(t, readRange(t, p, 0), 0, seq(0, 40))
}

func TestDeleteRecords(t *testing.T) {
	clock := newClock()
	p, m := memPartition(t, small(clock))
	appendIDs(t, p, seq(0, 100)...)
	require.NoError(t, p.DeleteRecords(40))
	require.Equal(t, int64(40), p.StartOffset())
	_, err := p.ReadBatches(nil, 39, 100)
	require.ErrorIs(t, err, ErrOutOfRange)
	requireIDs(t, readRange(t, p, 40), 40, seq(40, 100))
	require.NoError(t, p.DeleteRecords(10), "moving backwards is a no-op")
	require.Equal(t, int64(40), p.StartOffset())
	require.ErrorIs(t, p.DeleteRecords(101), ErrOutOfRange)

	// The start offset survives a crash: it was checkpointed.
	after := m.Crash()
	p2, err := Open(after, "topic-0", small(clock), false)
	require.NoError(t, err)
	require.Equal(t, int64(40), p2.StartOffset())
	require.NoError(t, p2.Close())
}

func TestTruncate(t *testing.T) {
	clock := newClock()
	p, m := memPartition(t, small(clock))
	for i := 0; i < 300; i += 3 {
		_, err := p.Append([]log.Record{rec(i), rec(i + 1), rec(i + 2)})
		require.NoError(t, err)
	}
	nsegs := len(p.Segments())
	require.Greater(t, nsegs, 4)

	require.NoError(t, p.Truncate(250), "inside a batch of three")
	require.Equal(t, int64(250), p.EndOffset())
	require.Less(t, len(p.Segments()), nsegs)
	requireIDs(t, readRange(t, p, 0), 0, seq(0, 250))
	appendIDs(t, p, 1000)
	recs := readRange(t, p, 249)
	require.Len(t, recs, 2)
	require.Equal(t, rec(1000).Value, recs[1].Value)

	require.NoError(t, p.Truncate(20), "back into a sealed segment")
	require.Equal(t, int64(20), p.EndOffset())
	requireIDs(t, readRange(t, p, 0), 0, seq(0, 20))
	appendIDs(t, p, 20, 21)
	requireIDs(t, readRange(t, p, 0), 0, seq(0, 22))
	require.NoError(t, p.Sync())

	require.NoError(t, p.DeleteRecords(5))
	require.ErrorIs(t, p.Truncate(4), ErrOutOfRange)
	require.ErrorIs(t, p.Truncate(23), ErrOutOfRange)

	// Truncation is durable: fsynced.
	after := m.Crash()
	p2, err := Open(after, "topic-0", small(clock), false)
	require.NoError(t, err)
	require.Equal(t, int64(22), p2.EndOffset())
	requireIDs(t, readRange(t, p2, 5), 5, seq(5, 22))
	require.NoError(t, p2.Close())
}

func TestFailedFsyncClosesToAppends(t *testing.T) {
	cfg := small(newClock())
	cfg.Sync = SyncAlways
	p, m := memPartition(t, cfg)
	appendIDs(t, p, 0, 1)
	m.SetInjector(vfs.FailOnce(vfs.OpSync, segment.LogSuffix))
	_, err := p.Append([]log.Record{rec(2)})
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, err, vfs.ErrInjected)
	_, err = p.Append([]log.Record{rec(3)})
	require.ErrorIs(t, err, ErrClosed, "after a failed fsync the partition takes no more appends")
	require.Contains(t, err.Error(), "fsync")
	recs := readRange(t, p, 0)
	require.GreaterOrEqual(t, len(recs), 2, "reads still work")
	require.ErrorIs(t, p.Close(), vfs.ErrInjected, "Close reports the failure: the shutdown is not clean")
}

// TestFailedWriteLeavesPartitionUsable fails an append's write: a write
// call; a copy into the mapping; and, with appends copied into the mapping,
// the reservation of room that a new segment's first append makes and then
// the write call it falls back to.
func TestFailedWriteLeavesPartitionUsable(t *testing.T) {
	tests := []struct {
		name       string
		writeCalls bool
		first      int // records appended before the failure
		inject     vfs.Injector
	}{
		{"write call", true, 2, vfs.FailOnce(vfs.OpWrite, segment.LogSuffix)},
		{"mapped copy", false, 2, vfs.FailOnce(vfs.OpWriteMap, segment.LogSuffix)},
		{"reservation then write call", false, 0, func() vfs.Injector {
			allocate, write := vfs.FailOnce(vfs.OpAllocate, segment.LogSuffix), vfs.FailOnce(vfs.OpWrite, segment.LogSuffix)
			return func(op vfs.Op, path string) error {
				if err := allocate(op, path); err != nil {
					return err
				}
				return write(op, path)
			}
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := small(newClock())
			cfg.WriteCalls = tt.writeCalls
			p, m := memPartition(t, cfg)
			appendIDs(t, p, seq(0, tt.first)...)
			m.SetInjector(tt.inject)
			_, err := p.Append([]log.Record{rec(tt.first)})
			require.ErrorIs(t, err, vfs.ErrInjected)
			require.Equal(t, int64(tt.first), p.EndOffset(), "a failed write assigns no offset")
			appendIDs(t, p, seq(tt.first, 4)...)
			requireIDs(t, readRange(t, p, 0), 0, seq(0, 4))
		})
	}
}

func TestClosed(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	appendIDs(t, p, 0)
	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
	_, err := p.Append([]log.Record{rec(1)})
	require.ErrorIs(t, err, ErrClosed)
	_, err = p.ReadBatches(nil, 0, 10)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, p.Sync(), ErrClosed)
}

func TestSyncPolicies(t *testing.T) {
	syncs := func(m *vfs.Mem) int { return m.Count(vfs.OpSync) }
	t.Run("always", func(t *testing.T) {
		cfg := small(newClock())
		cfg.Sync = SyncAlways
		p, m := memPartition(t, cfg)
		before := syncs(m)
		appendIDs(t, p, 0, 1, 2)
		require.Equal(t, before+3, syncs(m), "one fsync per lone append")
		require.Equal(t, int64(3), p.SyncedOffset())
	})
	t.Run("never", func(t *testing.T) {
		cfg := small(newClock())
		cfg.Sync = SyncNever
		p, m := memPartition(t, cfg)
		before := syncs(m)
		appendIDs(t, p, 0, 1, 2)
		require.Equal(t, before, syncs(m))
		require.Equal(t, int64(0), p.SyncedOffset())
		require.NoError(t, p.Close())
		require.Equal(t, before, syncs(m), "nor does Close")
	})
	t.Run("every", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { // the interval passes on the bubble's clock
			cfg := small(newClock())
			cfg.Sync = SyncEvery(5 * time.Millisecond)
			p, _ := memPartition(t, cfg)
			appendIDs(t, p, 0, 1, 2)
			time.Sleep(5*time.Millisecond - time.Nanosecond)
			synctest.Wait()
			require.Equal(t, int64(0), p.SyncedOffset(), "no fsync before the interval")
			time.Sleep(time.Nanosecond)
			synctest.Wait()
			require.Equal(t, int64(3), p.SyncedOffset(), "the background fsync at the interval")
			require.NoError(t, p.Close())
		})
	})
	require.Equal(t, "every 1s", SyncEvery(0).String())
	require.Equal(t, "always", SyncAlways.String())
}

// TestSyncPolicyValidate checks that a bad policy is refused as it was
// written, by Validate and by Check, and that the zero interval is the
// default.
func TestSyncPolicyValidate(t *testing.T) {
	require.NoError(t, SyncEvery(0).Validate())
	for _, tc := range []struct {
		p    SyncPolicy
		want string
	}{
		{SyncEvery(-time.Second), "partition: SyncEvery(-1s): the interval is negative (0 means the default, 1s): partition: invalid config"},
		{SyncPolicy{Mode: 7}, "partition: sync mode 7 is not SyncModeEvery (0), SyncModeAlways (1) or SyncModeNever (2): partition: invalid config"},
	} {
		err := tc.p.Validate()
		require.ErrorIs(t, err, ErrInvalidConfig)
		require.EqualError(t, err, tc.want)
		_, err = Config{Sync: tc.p}.Check()
		require.EqualError(t, err, tc.want, "Check refuses it too")
	}
	require.Equal(t, "every -1s", SyncEvery(-time.Second).String(), "not the default it would be mistaken for")
}

func TestRecoveryCutsTornTail(t *testing.T) {
	clock := newClock()
	for seed := range 20 {
		p, m := memPartition(t, small(clock))
		appendIDs(t, p, seq(0, 200)...)
		require.NoError(t, p.Sync())
		synced := p.EndOffset()
		appendIDs(t, p, seq(200, 230)...)

		after := m.CrashKeepingPrefix(newRand(seed))
		var logged strings.Builder
		cfg := small(clock)
		cfg.Logger = testLogger(&logged)
		p2, err := Open(after, "topic-0", cfg, false)
		require.NoError(t, err)
		end := p2.EndOffset()
		require.GreaterOrEqual(t, end, synced, "seed %d: synced records survive", seed)
		// Every synced record is there; of the others, those that
		// survived, each at its own offset (a segment whose unsynced tail
		// was lost whole leaves a gap before the next, as in Kafka).
		got := readRange(t, p2, 0)
		var ids []int
		for _, r := range got {
			ids = append(ids, int(r.Offset))
		}
		requireIDsAtOwnOffsets(t, got, ids)
		require.Equal(t, seq(0, int(synced)), ids[:synced], "seed %d", seed)
		appendIDs(t, p2, 5000)
		require.Equal(t, end+1, p2.EndOffset())
		require.NoError(t, p2.Close())
	}
}

// TestDamagedMiddleSegmentKeepsLaterOnes: a segment of a cleanly closed
// partition whose last batch is damaged (a disk's doing, not a crash's) is
// cut at the damage; the later segments, durable and intact, stay.
func TestDamagedMiddleSegmentKeepsLaterOnes(t *testing.T) {
	clock := newClock()
	p, m := memPartition(t, small(clock))
	appendIDs(t, p, seq(0, 300)...)
	segs := p.Segments()
	require.NoError(t, p.Close())
	require.Greater(t, len(segs), 4)

	// Damage the third segment's last batch and its index, as a disk might.
	victim := segs[2]
	path := "topic-0/" + segment.FileName(victim.Base, segment.LogSuffix)
	f, err := m.OpenFile(path, 2, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0xFF, 0xFF}, victim.Bytes-5)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(victim.Bytes-3))
	require.NoError(t, f.Close())

	var logged strings.Builder
	cfg := small(clock)
	cfg.Logger = testLogger(&logged)
	p2, err := Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	require.Equal(t, int64(300), p2.EndOffset(), "the later segments stay")
	require.Len(t, p2.Segments(), len(segs))
	cut := p2.Segments()[2].Next
	require.Less(t, cut, victim.Next, "the damaged batch is cut")
	require.GreaterOrEqual(t, cut, victim.Base)
	requireIDsAtOwnOffsets(t, readRange(t, p2, 0), append(seq(0, int(cut)), seq(int(victim.Next), 300)...))
	require.Contains(t, logged.String(), "cut")
	appendIDs(t, p2, 300)
	require.Equal(t, int64(301), p2.EndOffset())
	require.NoError(t, p2.Close())
}

func TestLeftoversRemovedAtOpen(t *testing.T) {
	p, m := memPartition(t, small(newClock()))
	appendIDs(t, p, 0, 1)
	require.NoError(t, p.Close())
	for _, name := range []string{
		segment.FileName(500, segment.LogSuffix+segment.DeletedSuffix),
		segment.FileName(600, segment.LogSuffix+segment.CleanedSuffix),
		segment.FileName(700, segment.IndexSuffix),
	} {
		f, err := m.OpenFile("topic-0/"+name, 66, 0o644)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	p, err := Open(m, "topic-0", small(newClock()), true)
	require.NoError(t, err)
	names, err := m.ReadDir("topic-0")
	require.NoError(t, err)
	require.Equal(t, []string{
		segment.FileName(0, segment.LogSuffix), // too small for index files
	}, names) // and one segment needs no recovery point
	require.NoError(t, p.Close())
}

func TestErrorsAreSentinels(t *testing.T) {
	for _, err := range []error{ErrOutOfRange, ErrBatchTooLarge, ErrEmptyBatch, ErrInvalidConfig, ErrClosed, ErrCorruptCheckpoint} {
		require.True(t, strings.HasPrefix(err.Error(), "partition: "), err.Error())
		require.True(t, errors.Is(err, err))
	}
}

func TestCompactedRefusesKeylessRecords(t *testing.T) {
	cfg := small(newClock())
	cfg.Compacted = true
	p, _ := memPartition(t, cfg)
	_, err := p.Append([]log.Record{rec(0), {Value: []byte("no key")}})
	require.ErrorIs(t, err, ErrNoKey)
	require.Zero(t, p.EndOffset(), "nothing written")
	_, err = p.Append([]log.Record{{Key: []byte{}, Value: []byte("empty key is a key")}})
	require.NoError(t, err)
}

// TestInterruptedSwap: at Open, .cleaned output is discarded and a complete
// .swap replaces the segments it covers (Kafka's LogLoader rules).
func TestInterruptedSwap(t *testing.T) {
	clock := newClock()
	p, m := memPartition(t, small(clock))
	appendIDs(t, p, seq(0, 200)...)
	segs := p.Segments()
	require.Greater(t, len(segs), 3)
	require.NoError(t, p.Close())
	dir := "topic-0"
	readAll := func(name string) []byte {
		f, err := m.OpenFile(dir+"/"+name, os.O_RDONLY, 0)
		require.NoError(t, err)
		defer f.Close()
		size, err := f.Size()
		require.NoError(t, err)
		b := make([]byte, size)
		_, err = f.ReadAt(b, 0)
		require.NoError(t, err)
		return b
	}
	write := func(name string, b []byte) {
		f, err := m.OpenFile(dir+"/"+name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		require.NoError(t, err)
		_, err = f.WriteAt(b, 0)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	// The first five batches of segment 1, as a rewrite of it would leave.
	log1 := readAll(segment.FileName(segs[1].Base, segment.LogSuffix))
	cut := 0
	for range 5 {
		h, err := log.ReadHeader(log1[cut:])
		require.NoError(t, err)
		cut += h.Size()
	}

	// Unfinished output (.cleaned) is discarded: nothing changes.
	write(segment.FileName(segs[1].Base, segment.LogSuffix+segment.CleanedSuffix), log1[:cut])
	p, err := Open(m, dir, small(clock), true)
	require.NoError(t, err)
	require.Equal(t, int64(200), p.EndOffset())
	require.NoError(t, p.Close())

	// A complete .swap replaces segment 1 (a compaction's, shorter than
	// the segment); the later segments stay, after a gap: offsets only
	// have to rise.
	write(segment.FileName(segs[1].Base, segment.LogSuffix+segment.SwapSuffix), log1[:cut])
	p, err = Open(m, dir, small(clock), true)
	require.NoError(t, err)
	require.Equal(t, int64(200), p.EndOffset())
	require.Len(t, p.Segments(), len(segs))
	requireIDsAtOwnOffsets(t, readRange(t, p, 0), append(seq(0, int(segs[1].Base+5)), seq(int(segs[2].Base), 200)...))
	names, err := m.ReadDir(dir)
	require.NoError(t, err)
	for _, n := range names {
		require.NotContains(t, n, segment.SwapSuffix)
		require.NotContains(t, n, segment.CleanedSuffix)
	}
	appendIDs(t, p, 200)
	require.NoError(t, p.Close())
}
