package partition

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/retention"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// byTime keeps records for an hour of record time.
var byTime = retention.Policy{RetentionMs: time.Hour.Milliseconds(), RetentionBytes: -1, DeleteByTimeAndSize: true}

func TestEnforceRetentionByTime(t *testing.T) {
	clock := newClock()
	p, m := memPartition(t, small(clock))
	for i := range 300 {
		clock.Add(time.Minute)
		appendIDs(t, p, i)
	}
	segs := p.Segments()
	require.Greater(t, len(segs), 5)

	// Nothing is older than an hour relative to the last record yet... but
	// the first segments are: 300 minutes of records.
	n, err := p.EnforceRetention(clock.Now(), byTime)
	require.NoError(t, err)
	require.Positive(t, n)
	left := p.Segments()
	require.Len(t, left, len(segs)-n)
	start := p.StartOffset()
	require.Equal(t, left[0].Base, start)
	for _, s := range segs[:n] {
		require.Less(t, s.MaxTimestamp, clock.Now().Add(-time.Hour).UnixMilli(), "only expired segments went")
	}
	require.GreaterOrEqual(t, segs[n].MaxTimestamp, clock.Now().Add(-time.Hour).UnixMilli(), "the first kept segment holds a record within the hour")
	_, err = p.ReadBatches(nil, start-1, 100)
	require.ErrorIs(t, err, ErrOutOfRange)
	requireIDs(t, readRange(t, p, start), start, seq(int(start), 300))
	// The files were renamed .deleted at once; they are unlinked when the
	// last holder lets go (here the background fsync of rolled segments,
	// which Sync runs now).
	require.NoError(t, p.Sync())
	names, err := m.ReadDir("topic-0")
	require.NoError(t, err)
	for _, s := range segs[:n] {
		for _, name := range names {
			require.False(t, strings.HasPrefix(name, segment.FileName(s.Base, "")), "%s of a deleted segment is gone", name)
		}
	}

	// Everything expires: the partition rolls and keeps one empty segment.
	clock.Add(48 * time.Hour)
	_, err = p.EnforceRetention(clock.Now(), byTime)
	require.NoError(t, err)
	require.Len(t, p.Segments(), 1)
	require.Equal(t, int64(300), p.StartOffset())
	require.Equal(t, int64(300), p.EndOffset())
	appendIDs(t, p, 300)
	requireIDs(t, readRange(t, p, 300), 300, []int{300})

	// The start offset survives a reopen.
	require.NoError(t, p.Close())
	p, err = Open(m, "topic-0", small(clock), true)
	require.NoError(t, err)
	require.Equal(t, int64(300), p.StartOffset())
	require.NoError(t, p.Close())
}

func TestEnforceRetentionBySizeAndStartOffset(t *testing.T) {
	clock := newClock()
	p, _ := memPartition(t, small(clock))
	appendIDs(t, p, seq(0, 400)...)
	total := p.Stats().Bytes
	n, err := p.EnforceRetention(clock.Now(), retention.Policy{RetentionMs: -1, RetentionBytes: total / 2, DeleteByTimeAndSize: true})
	require.NoError(t, err)
	require.Positive(t, n)
	require.GreaterOrEqual(t, p.Stats().Bytes, total/2, "size retention never goes below the limit")

	require.NoError(t, p.DeleteRecords(350))
	n, err = p.EnforceRetention(clock.Now(), retention.Policy{RetentionMs: -1, RetentionBytes: -1})
	require.NoError(t, err)
	require.Positive(t, n, "segments wholly below the start offset go, even for compact-only topics")
	require.Equal(t, int64(350), p.StartOffset(), "the start offset stays inside the segment that holds it")
	require.LessOrEqual(t, p.Segments()[0].Base, int64(350))
	requireIDs(t, readRange(t, p, 350), 350, seq(350, 400))
}

func TestFutureTimestampsRefused(t *testing.T) {
	clock := newClock()
	p, _ := memPartition(t, small(clock))
	r := rec(0)
	r.Timestamp = clock.Now().Add(2 * time.Hour)
	_, err := p.Append([]log.Record{r})
	require.ErrorIs(t, err, ErrTimestampTooFarAhead)
	require.Zero(t, p.EndOffset())
	late := rec(2)
	late.Timestamp = clock.Now().Add(time.Hour + time.Millisecond)
	_, err = p.Append([]log.Record{rec(1), late, rec(3)})
	require.ErrorIs(t, err, ErrTimestampTooFarAhead, "a later record of a batch too far ahead")
	require.Zero(t, p.EndOffset())
	r.Timestamp = clock.Now().Add(59 * time.Minute)
	_, err = p.Append([]log.Record{r})
	require.NoError(t, err, "within the skew")
	r.Timestamp = clock.Now().Add(time.Hour)
	_, err = p.Append([]log.Record{rec(1), r})
	require.NoError(t, err, "at the limit")

	cfg := small(clock)
	cfg.MaxTimestampSkew = -1
	p2, _ := memPartition(t, cfg)
	r.Timestamp = clock.Now().Add(1000 * time.Hour)
	_, err = p2.Append([]log.Record{r})
	require.NoError(t, err, "the check can be turned off")
}

// TestRetentionUnderReaders deletes segments while readers and tailing
// iterators run: no crash, and no error but out-of-range for offsets that
// are really gone.
func TestRetentionUnderReaders(t *testing.T) {
	clock := newClock()
	var clockMu sync.Mutex
	cfg := small(clock)
	cfg.Now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock.Now() }
	p, _ := memPartition(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var wg sync.WaitGroup
	appended := make(chan struct{})
	wg.Go(func() { // appender, a minute of record time per record
		defer close(appended)
		for i := range 1500 {
			clockMu.Lock()
			clock.Add(time.Minute)
			clockMu.Unlock()
			if _, err := p.Append([]log.Record{rec(i)}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() { // retention, often, until the appender is done
		for {
			if _, err := p.EnforceRetention(cfg.Now(), byTime); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-appended:
				return
			default:
				runtime.Gosched()
			}
		}
	})
	check := func(r log.Record) {
		want := rec(int(r.Offset))
		if string(want.Value) != string(r.Value) {
			t.Errorf("offset %d: wrong value", r.Offset)
		}
	}
	for range 3 { // readers that restart from the start offset when overtaken
		wg.Go(func() {
			rd := p.NewReader(0)
			defer rd.Close()
			var x log.Record
			for rd.Offset() < 1500 {
				err := rd.NextWait(ctx, &x)
				if errors.Is(err, ErrOutOfRange) {
					rd.SetOffset(p.StartOffset())
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				check(x)
			}
		})
	}
	wg.Go(func() { // a tailing iterator from the current end (the last record at most)
		from := min(p.EndOffset(), 1499)
		for x, err := range p.Records(ctx, from) {
			if err != nil {
				if !errors.Is(err, ErrOutOfRange) {
					t.Error(err)
				}
				return
			}
			check(x)
			if x.Offset == 1499 {
				return
			}
		}
	})
	wg.Wait()
	_, err := p.EnforceRetention(cfg.Now(), byTime)
	require.NoError(t, err)
	require.Greater(t, p.StartOffset(), int64(1000), "retention removed all but the last hour")
	require.NoError(t, p.Close())
}

// TestCrashDuringRetention crashes at every rename, removal or directory
// sync of a retention pass: the reopened partition is consistent, dense
// from its start offset, with the right records.
func TestCrashDuringRetention(t *testing.T) {
	ops := []vfs.Op{vfs.OpRename, vfs.OpRemove, vfs.OpSyncDir, vfs.OpCreate, vfs.OpWrite, vfs.OpWriteMap, vfs.OpAllocate, vfs.OpSync}
	build := func() (*Partition, *vfs.Mem, *fakeClock) {
		clock := newClock()
		cfg := small(clock)
		cfg.Sync = SyncAlways
		p, m := memPartition(t, cfg)
		for i := range 200 {
			clock.Add(time.Minute)
			appendIDs(t, p, i)
		}
		return p, m, clock
	}
	p, m, clock := build()
	before := opsIn(m, ops)
	_, err := p.EnforceRetention(clock.Now().Add(10*time.Hour), byTime)
	require.NoError(t, err)
	total := opsIn(m, ops) - before
	require.Positive(t, total)

	for k := 0; k <= total; k++ {
		p, m, clock := build()
		m.SetInjector(vfs.FailAfter(k, ops...))
		_, _ = p.EnforceRetention(clock.Now().Add(10*time.Hour), byTime)
		after := m.Crash()
		cfg := small(clock)
		p2, err := Open(after, "topic-0", cfg, false)
		require.NoError(t, err, "k=%d", k)
		start, end := p2.StartOffset(), p2.EndOffset()
		require.Equal(t, int64(200), end, "k=%d: acknowledged records stay", k)
		requireIDs(t, readRange(t, p2, start), start, seq(int(start), 200))
		require.NoError(t, p2.Close())
	}
}
