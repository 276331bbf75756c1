package compaction

import (
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

// span is a batch's offsets.
type span struct{ Base, Last int64 }

func spans(bs []batch) []span {
	out := make([]span, len(bs))
	for i, b := range bs {
		out[i] = span{b.h.BaseOffset, b.h.LastOffset()}
	}
	return out
}

func TestCleanKeepsLatestValuePerKey(t *testing.T) {
	l := newTestLog(t, 4<<10)
	l.write(kv("a", "1"), kv("b", "1"), kv("c", "1")) // 0-2: all superseded
	l.write(kv("a", "2"), nokey("x"))                 // 3-4
	l.roll()
	l.write(kv("b", "2"), kv("d", "1")) // 5-6: untouched
	l.write(kv("c", "2"))               // 7: untouched, last of the round
	l.roll()
	l.write(kv("a", "3")) // 8: active, never cleaned
	before := readSegs(t, l.segs)

	end, st := l.clean(0, t0, roundOpts{})
	require.Equal(t, int64(8), end)
	after := readSegs(t, l.segs)
	require.Equal(t, []summary{
		{Offset: 3, Key: "a", Value: "2"},
		{Offset: 5, Key: "b", Value: "2"},
		{Offset: 6, Key: "d", Value: "1"},
		{Offset: 7, Key: "c", Value: "2"},
		{Offset: 8, Key: "a", Value: "3"},
	}, summarize(records(after)))
	// Batches keep their offsets; the emptied first one is gone.
	require.Equal(t, []span{{3, 4}, {5, 6}, {7, 7}, {8, 8}}, spans(after))
	// Untouched batches are byte for byte the same.
	require.Equal(t, before[2].raw, after[1].raw)
	require.Equal(t, before[3].raw, after[2].raw)
	require.Equal(t, before[4].raw, after[3].raw)
	// The rebuilt batch keeps every header field but the timestamps it
	// recomputes, the length, count and CRC.
	want := before[1].h
	got := after[0].h
	want.Length, want.CRC, want.NumRecords = got.Length, got.CRC, 1
	require.Equal(t, want, got)

	require.Equal(t, Stats{
		BatchesRead: 4, BatchesWritten: 3, RecordsRead: 8, RecordsWritten: 4,
		BytesRead: st.BytesRead, BytesWritten: st.BytesWritten,
		Superseded: 3, Keyless: 1, Copied: 2, Rebuilt: 1, Segments: 1,
	}, st)
	require.Less(t, st.BytesWritten, st.BytesRead)
	// One cleaned segment, based where the group was.
	require.Len(t, l.segs, 2)
	require.Equal(t, int64(0), l.segs[0].Base())
	require.True(t, l.segs[0].Sealed())
	require.Equal(t, int64(8), l.segs[0].NextOffset())
}

func TestCleanKeepsLastBatchOfRoundEmpty(t *testing.T) {
	l := newTestLog(t, 4<<10)
	l.write(kv("a", "1"), nokey("x")) // 0-1
	l.write(nokey("y"), nokey("z"))   // 2-3: emptied, but last of the round
	l.roll()
	l.write(kv("a", "2"))

	end, st := l.clean(0, t0, roundOpts{})
	require.Equal(t, int64(4), end)
	after := readSegs(t, l.segs)
	require.Equal(t, []span{{0, 1}, {2, 3}, {4, 4}}, spans(after))
	empty := after[1]
	require.Len(t, empty.raw, log.BatchHeaderSize)
	require.Equal(t, int32(0), empty.h.NumRecords)
	require.Equal(t, int64(-1), empty.h.BaseTimestamp)
	require.Equal(t, t0.UnixMilli(), empty.h.MaxTimestamp)
	require.Equal(t, 1, st.Emptied)
	require.Equal(t, int64(4), l.segs[0].NextOffset(), "the cleaned segment still ends where the active one starts")

	// Once the log moves on, the empty batch is no longer the last of a
	// round, and goes (as does a's value, superseded at 4).
	l.write(kv("b", "1"))
	l.roll()
	end, _ = l.clean(end, t0, roundOpts{})
	require.Equal(t, int64(6), end)
	require.Equal(t, []span{{4, 4}, {5, 5}}, spans(readSegs(t, l.segs)))
}

func TestCleanTombstoneLifetime(t *testing.T) {
	l := newTestLog(t, 4<<10)
	l.now = t0.Add(-time.Hour)
	l.write(kv("a", "1"), kv("b", "1")) // 0-1
	l.now = t0.Add(-time.Minute)
	l.write(tomb("a"), kv("c", "1")) // 2-3
	l.roll()
	l.write(kv("z", "1")) // 4, active
	cfg := Config{DeleteRetention: 10 * time.Minute}
	horizon := t0.Add(10 * time.Minute)

	// First cleaning: a's value goes, its tombstone stays and its batch
	// gets the delete horizon; record timestamps do not change.
	end, st := l.clean(0, t0, roundOpts{cfg: cfg})
	require.Equal(t, int64(4), end)
	after := readSegs(t, l.segs)
	require.Equal(t, []summary{
		{Offset: 1, Key: "b", Value: "1"},
		{Offset: 2, Key: "a", Value: "<nil>"},
		{Offset: 3, Key: "c", Value: "1"},
		{Offset: 4, Key: "z", Value: "1"},
	}, summarize(records(after)))
	require.Equal(t, []span{{0, 1}, {2, 3}, {4, 4}}, spans(after))
	require.False(t, after[0].h.HasDeleteHorizon())
	require.Equal(t, t0.Add(-time.Hour).UnixMilli(), after[0].h.BaseTimestamp)
	stamped := after[1]
	require.True(t, stamped.h.HasDeleteHorizon())
	require.Equal(t, horizon.UnixMilli(), stamped.h.BaseTimestamp)
	require.Equal(t, t0.Add(-time.Minute).UnixMilli(), stamped.h.MaxTimestamp)
	for _, r := range stamped.recs {
		require.True(t, r.Timestamp.Equal(t0.Add(-time.Minute)))
	}
	require.Equal(t, 1, st.Horizons)

	// Before the horizon the tombstone stays, and its batch is copied as
	// it is (it has its horizon already).
	end, st = l.clean(end, horizon.Add(-time.Millisecond), roundOpts{cfg: cfg})
	require.Equal(t, int64(4), end)
	require.Equal(t, stamped.raw, readSegs(t, l.segs)[1].raw)
	require.Zero(t, st.TombstonesExpired)
	require.Zero(t, st.Horizons)

	// At the horizon it goes; its batch keeps the horizon and its offsets.
	_, st = l.clean(end, horizon, roundOpts{cfg: cfg})
	after = readSegs(t, l.segs)
	require.Equal(t, []summary{
		{Offset: 1, Key: "b", Value: "1"},
		{Offset: 3, Key: "c", Value: "1"},
		{Offset: 4, Key: "z", Value: "1"},
	}, summarize(records(after)))
	require.Equal(t, []span{{0, 1}, {2, 3}, {4, 4}}, spans(after))
	require.True(t, after[1].h.HasDeleteHorizon())
	require.Equal(t, int64(1), st.TombstonesExpired)
}

func TestCleanTombstoneSupersededByValue(t *testing.T) {
	l := newTestLog(t, 4<<10)
	l.write(kv("a", "1"))
	l.write(tomb("a"))
	l.write(kv("a", "2"))
	l.roll()
	l.write(kv("z", "1"))
	_, st := l.clean(0, t0, roundOpts{})
	after := readSegs(t, l.segs)
	require.Equal(t, []summary{{Offset: 2, Key: "a", Value: "2"}, {Offset: 3, Key: "z", Value: "1"}}, summarize(records(after)))
	require.Zero(t, st.Horizons, "no tombstone was copied")
}

// TestCleanBeyondMap checks that records at or past the map's end are all
// kept, key-less ones included, and that a tombstone there gets a horizon.
func TestCleanBeyondMap(t *testing.T) {
	l := newTestLog(t, 4<<10)
	l.write(kv("a", "1"), kv("b", "1")) // 0-1
	l.write(kv("a", "2"), nokey("x"))   // 2-3
	l.write(kv("b", "2"), tomb("a"))    // 4-5
	l.roll()
	l.write(kv("z", "1"))
	m := NewOffsetMap(1<<10, nil)
	end, err := BuildMap(m, l.segs, 0, 3, 0)
	require.NoError(t, err)
	require.Equal(t, int64(3), end)
	out, st, err := Clean(l.segs[:1], l.creator(4<<10), Round{Map: m, End: end, Now: t0})
	require.NoError(t, err)
	got := readSegs(t, out)
	require.Equal(t, []summary{
		{Offset: 1, Key: "b", Value: "1"},
		{Offset: 2, Key: "a", Value: "2"},
		{Offset: 3, Value: "x", NoKey: true},
		{Offset: 4, Key: "b", Value: "2"},
		{Offset: 5, Key: "a", Value: "<nil>"},
	}, summarize(records(got)))
	require.True(t, got[2].h.HasDeleteHorizon())
	require.Equal(t, t0.Add(DefaultDeleteRetention).UnixMilli(), got[2].h.BaseTimestamp)
	require.Equal(t, 1, st.Horizons)
}

// TestCleanMarkersWithoutRecords checks that a marker whose transaction
// has no record left is kept through the first cleaning, which stamps it
// with a delete horizon, and dropped by a cleaning after the horizon.
func TestCleanMarkersWithoutRecords(t *testing.T) {
	l := newTestLog(t, 4<<10)
	ctrl := controlBatch(t)
	l.appendBatch(ctrl)            // 0
	l.write(nokey("x"))            // 1
	l.appendBatch(controlBatch(t)) // 2
	l.write(nokey("y"))            // 3
	l.roll()
	l.write(kv("a", "2"))
	_, st := l.clean(0, t0, roundOpts{})
	after := readSegs(t, l.segs)
	require.Equal(t, []span{{0, 0}, {2, 2}, {3, 3}, {4, 4}}, spans(after))
	for _, b := range after[:2] {
		require.True(t, b.h.IsControl())
		require.True(t, b.h.HasDeleteHorizon())
		require.Equal(t, t0.Add(DefaultDeleteRetention).UnixMilli(), b.h.BaseTimestamp)
		require.Len(t, b.recs, 1, "the marker record stays until the horizon")
	}
	require.Equal(t, 2, st.Horizons)
	require.Len(t, after[2].raw, log.BatchHeaderSize, "emptied, kept as the last of the round")

	_, st = l.clean(0, t0.Add(DefaultDeleteRetention-time.Millisecond), roundOpts{})
	require.Equal(t, []span{{0, 0}, {2, 2}, {3, 3}, {4, 4}}, spans(readSegs(t, l.segs)), "before the horizon")
	require.Zero(t, st.MarkersRemoved)
	_, st = l.clean(0, t0.Add(DefaultDeleteRetention), roundOpts{})
	require.Equal(t, []span{{3, 3}, {4, 4}}, spans(readSegs(t, l.segs)), "at the horizon")
	require.Equal(t, int64(2), st.MarkersRemoved)
}

func TestCleanLogAppendTime(t *testing.T) {
	l := newTestLog(t, 4<<10)
	appendTime := t0.Add(time.Hour).UnixMilli()
	recs := []log.Record{
		{Key: []byte("a"), Value: []byte("1"), Timestamp: t0},
		{Key: []byte("b"), Value: []byte("1"), Timestamp: t0.Add(time.Second)},
		{Key: []byte("c"), Timestamp: t0.Add(2 * time.Second)},
	}
	b, err := log.EncodeBatch(nil, recs, log.BatchOptions{TimestampType: log.LogAppendTime, Now: appendTime})
	require.NoError(t, err)
	l.appendBatch(b)
	l.write(kv("a", "2"))
	l.roll()
	l.write(kv("z", "1"))
	l.clean(0, t0, roundOpts{})
	got := readSegs(t, l.segs)[0]
	require.Equal(t, log.LogAppendTime, got.h.TimestampType())
	require.Equal(t, appendTime, got.h.MaxTimestamp)
	require.True(t, got.h.HasDeleteHorizon())
	it, err := log.NewRecordIter(got.raw)
	require.NoError(t, err)
	var r log.Record
	var stored []int64
	for it.Next(&r) {
		stored = append(stored, it.StoredTimestamp())
		require.Equal(t, appendTime, r.Timestamp.UnixMilli())
	}
	require.NoError(t, it.Err())
	require.Equal(t, []int64{t0.Add(time.Second).UnixMilli(), t0.Add(2 * time.Second).UnixMilli()}, stored)
}

func TestCleanKeepsLastBatchOfProducer(t *testing.T) {
	l := newTestLog(t, 4<<10)
	b, err := log.EncodeBatch(nil, []log.Record{kv("a", "1"), kv("b", "1")},
		log.BatchOptions{Now: t0.UnixMilli(), Idempotent: true, ProducerID: 9, ProducerEpoch: 3, BaseSequence: 40})
	require.NoError(t, err)
	l.appendBatch(b)                    // 0-1, producer 9's last batch
	l.write(kv("a", "2"), kv("b", "2")) // 2-3
	l.write(kv("c", "1"))               // 4
	l.roll()
	l.write(kv("z", "1"))
	m := NewOffsetMap(1<<10, nil)
	end, err := BuildMap(m, l.segs, 0, l.active().Base(), 0)
	require.NoError(t, err)
	for _, tt := range []struct {
		name      string
		producers map[int64]int64
		want      []span
	}{
		{"active producer", map[int64]int64{9: 1}, []span{{0, 1}, {2, 3}, {4, 4}}},
		{"producer moved on", map[int64]int64{9: 7}, []span{{2, 3}, {4, 4}}},
		{"no producer state", nil, []span{{2, 3}, {4, 4}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := Clean(l.segs[:1], l.creator(4<<10), Round{Map: m, End: end, Now: t0, ProducerLastOffsets: tt.producers})
			require.NoError(t, err)
			got := readSegs(t, out)
			require.Equal(t, tt.want, spans(got))
			if len(got) == 3 {
				h := got[0].h
				require.Equal(t, int32(0), h.NumRecords)
				require.Equal(t, []any{int64(9), int16(3), int32(40)}, []any{h.ProducerID, h.ProducerEpoch, h.BaseSequence})
			}
		})
	}
}

// TestCleanCollidingKeys forces every key to the same hash: the newer value
// of each key must survive, none may shadow another.
func TestCleanCollidingKeys(t *testing.T) {
	l := newTestLog(t, 4<<10)
	l.write(kv("a", "1"), kv("b", "1"))
	l.write(kv("b", "2"), kv("c", "1"))
	l.write(kv("a", "2"))
	l.roll()
	l.write(kv("z", "1"))
	m := NewOffsetMap(1<<10, constHash(7))
	l.clean(0, t0, roundOpts{om: m})
	require.Equal(t, []summary{
		{Offset: 2, Key: "b", Value: "2"},
		{Offset: 3, Key: "c", Value: "1"},
		{Offset: 4, Key: "a", Value: "2"},
		{Offset: 5, Key: "z", Value: "1"},
	}, summarize(records(readSegs(t, l.segs))))
}

// TestCleanSplitsOutput gives Clean output segments too small for the
// group: it starts new ones, each based at its first batch, and the result
// reads the same.
func TestCleanSplitsOutput(t *testing.T) {
	build := func() *testLog {
		l := newTestLog(t, 4<<10)
		for i := range 60 {
			l.write(kv(string(rune('a'+i%7)), "value-value-value"), kv("u"+string(rune('a'+i)), "x"))
		}
		l.roll()
		l.write(kv("z", "1"))
		return l
	}
	whole, split := build(), build()
	_, stWhole := whole.clean(0, t0, roundOpts{groupBytes: 1 << 20})
	_, stSplit := split.clean(0, t0, roundOpts{groupBytes: 1 << 20, outBytes: 512})
	require.Equal(t, 1, stWhole.Segments)
	require.Greater(t, stSplit.Segments, 3)
	a, b := readSegs(t, whole.segs), readSegs(t, split.segs)
	require.Equal(t, len(a), len(b))
	for i := range a {
		require.Equal(t, a[i].raw, b[i].raw)
	}
	require.Equal(t, int64(0), split.segs[0].Base())
	for i, s := range split.segs[:len(split.segs)-1] {
		require.True(t, s.Sealed())
		if i > 0 {
			first := readSegs(t, []*segment.Segment{s})[0]
			require.Equal(t, first.h.BaseOffset, s.Base())
		}
	}
}

func TestCleanErrors(t *testing.T) {
	l := newTestLog(t, 4<<10)
	l.write(kv("a", "1"))
	l.roll()
	l.write(kv("a", "2"))
	l.roll()
	m := NewOffsetMap(1<<10, nil)
	create := l.creator(4 << 10)
	tests := []struct {
		name   string
		src    []*segment.Segment
		create CreateFunc
		m      *OffsetMap
		want   error
	}{
		{"no segments", nil, create, m, ErrInvalid},
		{"out of order", []*segment.Segment{l.segs[1], l.segs[0]}, create, m, ErrInvalid},
		{"no map", l.segs[:1], create, nil, ErrInvalid},
		{"no create", l.segs[:1], nil, m, ErrInvalid},
		{"output too small", l.segs[:1], l.creator(10), m, segment.ErrFull},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := Clean(tt.src, tt.create, Round{Map: tt.m, End: 1, Now: t0})
			require.ErrorIs(t, err, tt.want)
			require.Nil(t, out)
		})
	}
}

// TestCleanErrorKeepsSources fails a Clean whose output is written as
// .cleaned files beside its sources, as the partition writes it: the output
// is deleted and the sources, one of which has the output's base offset,
// keep their files.
func TestCleanErrorKeepsSources(t *testing.T) {
	l := newTestLog(t, 4<<10)
	l.write(kv("a", "1"))
	l.roll()
	l.write(kv("z", "1"))
	cfg := l.cfg
	cfg.MaxBytes = 10 // too small for any batch
	create := func(base int64) (*segment.Segment, error) {
		return segment.CreateTemp(l.fs, "log", base, segment.CleanedSuffix, cfg)
	}
	before, err := l.fs.ReadDir("log")
	require.NoError(t, err)
	out, _, err := Clean(l.segs[:1], create, Round{Map: NewOffsetMap(1<<10, nil), End: 1, Now: t0})
	require.ErrorIs(t, err, segment.ErrFull)
	require.Nil(t, out)
	after, err := l.fs.ReadDir("log")
	require.NoError(t, err)
	require.Equal(t, before, after)
}

// TestCleanLargeGroup cleans a group larger than Clean's write buffer in
// which every batch survives untouched: the output is the input, byte for
// byte.
func TestCleanLargeGroup(t *testing.T) {
	l := newTestLog(t, 512<<10)
	value := make([]byte, 1000)
	for i := range 3000 {
		l.write(log.Record{Key: fmt.Appendf(nil, "key-%d", i), Value: value})
	}
	l.roll()
	l.write(kv("z", "1"))
	before := readSegs(t, l.segs)
	_, st := l.clean(0, t0, roundOpts{groupBytes: 4 << 20, outBytes: 4 << 20})
	require.Greater(t, st.BytesWritten, int64(2*flushBytes))
	require.Equal(t, st.BatchesRead, st.Copied)
	require.Len(t, l.segs, 2)
	after := readSegs(t, l.segs)
	require.Equal(t, len(before), len(after))
	for i := range before {
		require.Equal(t, before[i].raw, after[i].raw)
	}
}

// TestCleanIOErrors fails the file system under Clean: the error is
// returned and the segments Clean made are deleted. Appends copy into the
// files' mappings, which fails nothing (a failed reservation of room falls
// back to a write call), so the failed write is tested with segments that
// make write calls.
func TestCleanIOErrors(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpCreate, vfs.OpWrite, vfs.OpSync} {
		t.Run(op.String(), func(t *testing.T) {
			l := newTestLog(t, 4<<10)
			l.cfg.WriteCalls = op == vfs.OpWrite
			for i := range 50 {
				l.write(kv(fmt.Sprint(i%10), "value"))
			}
			l.roll()
			m := NewOffsetMap(1<<10, nil)
			end, err := BuildMap(m, l.segs, 0, l.active().Base(), 0)
			require.NoError(t, err)
			create := l.creator(64 << 10)
			dir := fmt.Sprintf("cleaned-%d", l.rounds)
			l.fs.SetInjector(func(o vfs.Op, path string) error {
				if o == op && strings.HasPrefix(path, dir) {
					return vfs.ErrInjected
				}
				return nil
			})
			out, _, err := Clean(l.segs[:len(l.segs)-1], create, Round{Map: m, End: end, Now: t0})
			l.fs.SetInjector(nil)
			require.ErrorIs(t, err, vfs.ErrInjected)
			require.Nil(t, out)
			names, err := l.fs.ReadDir(dir)
			require.NoError(t, err)
			require.Empty(t, names)
		})
	}
}

// TestCleanCorruptSource damages a batch of a sealed segment: BuildMap and
// Clean report it as segment.ErrCorrupt.
func TestCleanCorruptSource(t *testing.T) {
	l := newTestLog(t, 4<<10)
	l.write(kv("a", "1"))
	l.write(kv("b", "1"))
	l.roll()
	l.write(kv("z", "1"))
	// Flip a byte of the second batch's value, and reopen the segment as
	// a new process would, so that its CRC is checked again.
	first := readSegs(t, l.segs[:1])[0]
	f, err := l.fs.OpenFile(l.segs[0].Path(), os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{'X'}, int64(len(first.raw))+int64(first.h.Size())-2)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, l.segs[0].Close())
	l.segs[0], err = segment.Open(l.fs, "log", 0, l.cfg, false)
	require.NoError(t, err)

	m := NewOffsetMap(1<<10, nil)
	_, err = BuildMap(m, l.segs, 0, l.active().Base(), 0)
	require.ErrorIs(t, err, segment.ErrCorrupt)
	_, _, err = Clean(l.segs[:1], l.creator(4<<10), Round{Map: m, End: 2, Now: t0})
	require.ErrorIs(t, err, segment.ErrCorrupt)
}
