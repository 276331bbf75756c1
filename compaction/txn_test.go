package compaction

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// txnLog writes transactions into a testLog.
type txnLog struct {
	*testLog
	first map[int64]int64 // the open transaction's first offset, per producer
}

func newTxnLog(t *testing.T) *txnLog {
	return &txnLog{testLog: newTestLog(t, 4<<10), first: map[int64]int64{}}
}

// txn writes recs as one transactional batch of producer pid.
func (l *txnLog) txn(pid int64, recs ...log.Record) int64 {
	l.tb.Helper()
	b, err := log.EncodeBatch(nil, recs, log.BatchOptions{Idempotent: true, Transactional: true, ProducerID: pid, Now: l.now.UnixMilli()})
	require.NoError(l.tb, err)
	off := l.appendBatch(b)
	if _, ok := l.first[pid]; !ok {
		l.first[pid] = off
	}
	return off
}

// end writes pid's marker; an ABORT goes into the .txnindex of the segment
// holding it, as the partition records it.
func (l *txnLog) end(pid int64, commit bool) int64 {
	l.tb.Helper()
	typ := log.ControlAbort
	if commit {
		typ = log.ControlCommit
	}
	b, err := log.EncodeControlBatch(nil, typ, log.MarkerOptions{ProducerID: pid, Now: l.now.UnixMilli()})
	require.NoError(l.tb, err)
	off := l.appendBatch(b)
	if first, ok := l.first[pid]; ok && !commit {
		require.NoError(l.tb, l.active().AppendAbortedTxn(segment.AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: off, LastStableOffset: first}))
	}
	delete(l.first, pid)
	return off
}

// markers lists the offsets and types of the control batches of bs.
func markers(t *testing.T, bs []batch) map[int64]log.ControlType {
	out := map[int64]log.ControlType{}
	for _, b := range bs {
		if b.h.IsControl() && len(b.recs) > 0 {
			typ, err := log.ParseControlKey(b.recs[0].Key)
			require.NoError(t, err)
			out[b.h.BaseOffset] = typ
		}
	}
	return out
}

// dataRecords is records without the markers.
func dataRecords(bs []batch) []log.Record {
	var recs []log.Record
	for _, b := range bs {
		if !b.h.IsControl() {
			recs = append(recs, b.recs...)
		}
	}
	return recs
}

func allAborted(l *txnLog) []segment.AbortedTxn {
	var out []segment.AbortedTxn
	for _, s := range l.segs {
		out = append(out, s.AbortedTxns()...)
	}
	return out
}

// An aborted record neither survives nor supersedes the committed record
// of its key; committed transactional records are data; each marker stays
// while the records it decides do, then goes after its delete horizon.
func TestCleanTransactions(t *testing.T) {
	l := newTxnLog(t)
	l.write(kv("a", "1"))                // 0
	l.txn(1, kv("a", "aborted"))         // 1
	l.txn(2, kv("b", "1"), kv("c", "1")) // 2-3
	l.write(kv("d", "1"))                // 4
	abort := l.end(1, false)             // 5
	commit := l.end(2, true)             // 6
	l.write(kv("c", "2"))                // 7
	l.roll()
	l.write(kv("z", "1")) // 8

	_, st := l.clean(0, t0, roundOpts{})
	got := readSegs(t, l.segs)
	require.Equal(t, []summary{
		{Offset: 0, Key: "a", Value: "1"},
		{Offset: 2, Key: "b", Value: "1"},
		{Offset: 4, Key: "d", Value: "1"},
		{Offset: 7, Key: "c", Value: "2"},
		{Offset: 8, Key: "z", Value: "1"},
	}, summarize(dataRecords(got)))
	require.Equal(t, int64(1), st.Aborted)
	require.Equal(t, map[int64]log.ControlType{abort: log.ControlAbort, commit: log.ControlCommit}, markers(t, got),
		"both markers decided records this cleaning met")
	require.Equal(t, []segment.AbortedTxn{{ProducerID: 1, FirstOffset: 1, LastOffset: abort, LastStableOffset: 1}}, l.segs[0].AbortedTxns(),
		"the kept ABORT marker keeps its .txnindex entry")

	// The aborted records are gone: the ABORT marker is not needed any
	// more; the COMMIT marker still is (b=1 is its transaction's).
	_, st = l.clean(0, t0, roundOpts{})
	got = readSegs(t, l.segs)
	require.Equal(t, map[int64]log.ControlType{abort: log.ControlAbort, commit: log.ControlCommit}, markers(t, got))
	require.Empty(t, allAborted(l), "no aborted record left to name")
	require.Equal(t, 1, st.Horizons)
	for _, b := range got {
		if b.h.BaseOffset == abort {
			require.True(t, b.h.HasDeleteHorizon())
		}
		if b.h.BaseOffset == commit {
			require.False(t, b.h.HasDeleteHorizon())
		}
	}
	_, st = l.clean(0, t0.Add(DefaultDeleteRetention), roundOpts{})
	got = readSegs(t, l.segs)
	require.Equal(t, map[int64]log.ControlType{commit: log.ControlCommit}, markers(t, got))
	require.Equal(t, int64(1), st.MarkersRemoved)

	// Once b=1 is superseded, the COMMIT marker goes the same way.
	l.write(kv("b", "2"))
	l.roll()
	l.write(kv("y", "1"))
	l.clean(0, t0.Add(DefaultDeleteRetention), roundOpts{})
	l.clean(0, t0.Add(DefaultDeleteRetention), roundOpts{})
	require.Equal(t, map[int64]log.ControlType{commit: log.ControlCommit}, markers(t, readSegs(t, l.segs)), "stamped, kept until the horizon")
	l.clean(0, t0.Add(2*DefaultDeleteRetention), roundOpts{})
	require.Empty(t, markers(t, readSegs(t, l.segs)))
}

// A transaction aborted by a marker in a later segment (here the active
// one, which is never cleaned) is dropped from the segments cleaned, and
// its keys are not mapped; a producer's later transaction is data.
func TestCleanAbortedBeforeItsMarker(t *testing.T) {
	l := newTxnLog(t)
	l.write(kv("k", "committed"))  // 0
	l.txn(5, kv("k", "aborted-1")) // 1
	l.roll()
	l.txn(5, kv("k", "aborted-2")) // 2
	l.roll()
	abort := l.end(5, false) // 3, in the active segment
	l.txn(5, kv("j", "later"))
	l.end(5, true)

	_, st := l.clean(0, t0, roundOpts{})
	require.Equal(t, int64(2), st.Aborted)
	got := summarize(dataRecords(readSegs(t, l.segs)))
	require.Equal(t, []summary{{Offset: 0, Key: "k", Value: "committed"}, {Offset: 4, Key: "j", Value: "later"}}, got)
	require.Equal(t, []segment.AbortedTxn{{ProducerID: 5, FirstOffset: 1, LastOffset: abort, LastStableOffset: 1}}, allAborted(l))
}

// Interleaved producers: only the aborted producer's batches go, between
// its transaction's first offset and its marker.
func TestCleanInterleavedTransactions(t *testing.T) {
	l := newTxnLog(t)
	l.txn(1, kv("a", "1-0"))
	l.txn(2, kv("b", "2-0"))
	l.txn(1, kv("c", "1-1"))
	l.write(kv("d", "plain"))
	l.end(2, false)
	l.txn(2, kv("e", "2-1"))
	l.end(1, true)
	l.end(2, true)
	l.roll()
	l.write(kv("z", "1"))
	l.clean(0, t0, roundOpts{})
	var values []string
	for _, r := range dataRecords(readSegs(t, l.segs)) {
		values = append(values, string(r.Value))
	}
	require.Equal(t, []string{"1-0", "1-1", "plain", "2-1", "1"}, values)
}
