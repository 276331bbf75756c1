package compaction

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// t0 is the tests' epoch.
var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// kv is a record with a key and a value.
func kv(key, value string) log.Record { return log.Record{Key: []byte(key), Value: []byte(value)} }

// tomb is a tombstone.
func tomb(key string) log.Record { return log.Record{Key: []byte(key)} }

// nokey is a record without a key.
func nokey(value string) log.Record { return log.Record{Value: []byte(value)} }

// testLog is a chain of segments on the in-memory FS; the last is active.
type testLog struct {
	tb     testing.TB
	fs     *vfs.Mem
	cfg    segment.Config
	segs   []*segment.Segment
	next   int64
	now    time.Time // timestamp of records written without one
	rounds int
}

func newTestLog(tb testing.TB, maxBytes int64) *testLog {
	tb.Helper()
	fsys := vfs.NewMem()
	require.NoError(tb, fsys.MkdirAll("log", 0o755))
	l := &testLog{tb: tb, fs: fsys, cfg: segment.Config{MaxBytes: maxBytes, AllowGaps: true}, now: t0}
	l.roll()
	tb.Cleanup(func() {
		for _, s := range l.segs {
			_ = s.Close()
		}
	})
	return l
}

// roll seals the active segment, if it holds anything, and starts a new one.
func (l *testLog) roll() {
	l.tb.Helper()
	if n := len(l.segs); n > 0 {
		if l.segs[n-1].Size() == 0 {
			return
		}
		require.NoError(l.tb, l.segs[n-1].Seal())
	}
	s, err := segment.Create(l.fs, "log", l.next, l.cfg)
	require.NoError(l.tb, err)
	l.segs = append(l.segs, s)
}

// write appends recs as one batch and returns its base offset. Records
// without a timestamp get l.now.
func (l *testLog) write(recs ...log.Record) int64 {
	l.tb.Helper()
	b, err := log.EncodeBatch(nil, recs, log.BatchOptions{BaseOffset: l.next, Now: l.now.UnixMilli()})
	require.NoError(l.tb, err)
	return l.appendBatch(b)
}

// appendBatch appends an encoded batch, stamped with the next offset.
func (l *testLog) appendBatch(b []byte) int64 {
	l.tb.Helper()
	log.SetBaseOffset(b, l.next)
	h, err := log.ReadHeader(b)
	require.NoError(l.tb, err)
	err = l.active().Append(b)
	if errors.Is(err, segment.ErrFull) {
		l.roll()
		err = l.active().Append(b)
	}
	require.NoError(l.tb, err)
	base := l.next
	l.next = h.NextOffset()
	return base
}

func (l *testLog) active() *segment.Segment { return l.segs[len(l.segs)-1] }

func (l *testLog) infos() []SegmentInfo {
	infos := make([]SegmentInfo, len(l.segs))
	for i, s := range l.segs {
		infos[i] = Info(s)
	}
	return infos
}

// creator returns a CreateFunc writing into a directory of its own.
func (l *testLog) creator(maxBytes int64) CreateFunc {
	l.tb.Helper()
	l.rounds++
	dir := fmt.Sprintf("cleaned-%d", l.rounds)
	require.NoError(l.tb, l.fs.MkdirAll(dir, 0o755))
	cfg := l.cfg
	cfg.MaxBytes = maxBytes
	return func(base int64) (*segment.Segment, error) {
		return segment.Create(l.fs, dir, base, cfg)
	}
}

// roundOpts tunes testLog.clean.
type roundOpts struct {
	cfg        Config
	om         *OffsetMap
	groupBytes int64 // Group's maxBytes, default 3 segments
	outBytes   int64 // MaxBytes of the cleaned segments, default groupBytes*2
}

// clean runs one round from firstDirty up to the active segment, swaps the
// cleaned segments in, and returns the round's end and stats.
func (l *testLog) clean(firstDirty int64, now time.Time, o roundOpts) (int64, Stats) {
	l.tb.Helper()
	if o.om == nil {
		o.om = NewOffsetMap(1<<20, nil)
	}
	if o.groupBytes == 0 {
		o.groupBytes = 3 * l.cfg.MaxBytes
	}
	if o.outBytes == 0 {
		o.outBytes = 2 * o.groupBytes
	}
	o.om.reset()
	var aborted []segment.AbortedTxn // what Partition.AbortedTxns gives
	for _, s := range l.segs {
		aborted = append(aborted, s.AbortedTxns()...)
	}
	end, err := BuildMapAborted(o.om, l.segs, firstDirty, l.active().Base(), 0, aborted)
	require.NoError(l.tb, err)
	create := l.creator(o.outBytes)
	var total Stats
	var segs []*segment.Segment
	spans := Group(l.infos(), end, o.groupBytes, 0)
	for _, g := range spans {
		out, st, err := Clean(l.segs[g.Start:g.End], create, Round{Config: o.cfg, Map: o.om, End: end, Now: now, Aborted: aborted})
		require.NoError(l.tb, err)
		total.Add(st)
		for _, s := range l.segs[g.Start:g.End] {
			require.NoError(l.tb, s.Close())
		}
		segs = append(segs, out...)
	}
	done := 0
	if len(spans) > 0 {
		done = spans[len(spans)-1].End
	}
	l.segs = append(segs, l.segs[done:]...)
	return end, total
}

// batch is a batch read back with its records (copied).
type batch struct {
	h    log.BatchHeader
	raw  []byte
	recs []log.Record
}

// readSegs reads every batch of segs.
func readSegs(tb testing.TB, segs []*segment.Segment) []batch {
	tb.Helper()
	var out []batch
	for _, s := range segs {
		if s.Size() == 0 {
			continue
		}
		data, err := s.Read(nil, s.Base(), int(s.Size()))
		require.NoError(tb, err)
		for p := 0; p < len(data); {
			h, err := log.Validate(data[p:])
			require.NoError(tb, err)
			b := batch{h: h, raw: data[p : p+h.Size()]}
			for r, err := range log.Records(b.raw) {
				require.NoError(tb, err)
				b.recs = append(b.recs, r)
			}
			out = append(out, b)
			p += h.Size()
		}
	}
	return out
}

// records flattens batches into their records.
func records(bs []batch) []log.Record {
	var recs []log.Record
	for _, b := range bs {
		recs = append(recs, b.recs...)
	}
	return recs
}

// summary is a record as the tests compare them: offset, key, value.
type summary struct {
	Offset int64
	Key    string
	Value  string // "<nil>" for a tombstone, "" with NoKey for a key-less one
	NoKey  bool
}

func summarize(recs []log.Record) []summary {
	out := make([]summary, len(recs))
	for i, r := range recs {
		out[i] = summary{Offset: r.Offset, Key: string(r.Key), Value: string(r.Value), NoKey: r.Key == nil}
		if r.Value == nil {
			out[i].Value = "<nil>"
		}
	}
	return out
}
