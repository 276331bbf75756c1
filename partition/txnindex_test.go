package partition

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/retention"
	"github.com/stratalog/strata/segment"
)

// plain appends a non-transactional record with value v.
func plain(t testing.TB, p *Partition, v string) int64 {
	t.Helper()
	off, err := p.Append([]log.Record{{Key: []byte("plain"), Value: []byte(v)}})
	require.NoError(t, err)
	return off
}

// Two producers interleave their transactions with plain records: under
// ReadCommitted the aborted one's records go, the committed one's stay;
// ReadUncommitted sees everything but the markers.
func TestReadCommittedInterleaved(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	w := newTxnWriter(t, p)
	w.write(1, 0, 2)
	plain(t, p, "n0")
	w.write(2, 0, 1)
	w.write(1, 2, 1)
	w.end(1, false)
	w.write(2, 1, 2)
	w.end(2, true)
	plain(t, p, "n1")
	w.write(1, 3, 1) // a later transaction of the aborted producer
	w.end(1, true)

	require.Equal(t, []string{"n0", "p2-0", "p2-1", "p2-2", "n1", "p1-3"}, values(readIso(t, p, 0, ReadCommitted)))
	require.Equal(t, []string{"p1-0", "p1-1", "n0", "p2-0", "p1-2", "p2-1", "p2-2", "n1", "p1-3"}, values(readIso(t, p, 0, ReadUncommitted)))
	require.Equal(t, values(readIso(t, p, 0, ReadUncommitted)), values(readRange(t, p, 0)), "NewReader reads uncommitted")
	// From inside the aborted transaction, and from each offset.
	for from := int64(0); from < p.EndOffset(); from++ {
		var want []string
		for _, r := range readIso(t, p, 0, ReadCommitted) {
			if r.Offset >= from {
				want = append(want, string(r.Value))
			}
		}
		require.Equal(t, want, values(readIso(t, p, from, ReadCommitted)), "from %d", from)
	}
	require.Equal(t, []AbortedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: 5, LastStableOffset: 3}}, p.AbortedTxns(0, p.EndOffset()))
	require.Empty(t, p.AbortedTxns(6, p.EndOffset()))
	require.Len(t, p.AbortedTxns(5, 6), 1)
	require.Empty(t, p.AbortedTxns(0, 0))
}

// An aborted transaction spans several segments (it began before a roll):
// its records are skipped in every segment, read from anywhere, also after
// the partition is reopened, cleanly or after a crash.
func TestReadCommittedAcrossSegments(t *testing.T) {
	clock := newClock()
	p, m := memPartition(t, small(clock))
	w := newTxnWriter(t, p)
	var want []string
	for i := range 60 {
		w.write(7, i, 3) // 7 aborts
		w.write(8, i, 1) // 8 commits
		want = append(want, txnValue(8, i))
		if i%10 == 9 {
			plain(t, p, txnValue(0, i))
			want = append(want, txnValue(0, i))
		}
	}
	w.end(7, false)
	w.end(8, true)
	require.GreaterOrEqual(t, len(p.Segments()), 3, "the transaction spans rolls")
	check := func(p *Partition) {
		t.Helper()
		require.Equal(t, want, values(readIso(t, p, 0, ReadCommitted)))
		mid := p.Segments()[2].Base + 1
		var tail []string
		for _, r := range readIso(t, p, 0, ReadCommitted) {
			if r.Offset >= mid {
				tail = append(tail, string(r.Value))
			}
		}
		require.Equal(t, tail, values(readIso(t, p, mid, ReadCommitted)))
		require.Len(t, readIso(t, p, 0, ReadUncommitted), 60*4+6)
	}
	check(p)
	require.NoError(t, p.Close())
	for _, clean := range []bool{true, false} {
		p, err := Open(m, "topic-0", small(clock), clean)
		require.NoError(t, err)
		check(p)
		require.NoError(t, p.Close())
	}
}

func txnValue(pid int64, n int) string { return string(txnRec(pid, n).Value) }

// The .txnindex has no file until a transaction aborts in its segment, and
// it follows its segment: cut by Truncate, gone with retention.
func TestTxnIndexFilesFollowPartition(t *testing.T) {
	clock := newClock()
	p, m := memPartition(t, small(clock))
	defer p.Close()
	w := newTxnWriter(t, p)
	path := func(base int64) string {
		return filepath.Join("topic-0", segment.FileName(base, segment.TxnIndexSuffix))
	}
	has := func(base int64) bool { _, err := m.Stat(path(base)); return err == nil }
	w.write(1, 0, 1)
	w.end(1, true)
	require.False(t, has(0), "no .txnindex without an aborted transaction")
	w.write(1, 1, 1)
	abort := w.end(1, false)
	require.True(t, has(0))
	for p.Segments()[0].Next == p.EndOffset() {
		plain(t, p, "filler-filler-filler-filler-filler-filler-filler-filler-filler-filler-filler-filler")
	}
	w.write(2, 0, 1)
	abort2 := w.end(2, false)
	second := p.Segments()[len(p.Segments())-1].Base
	require.True(t, has(second))
	require.Len(t, p.AbortedTxns(0, p.EndOffset()), 2)

	// Truncation below the second marker drops its entry (the file stays,
	// empty), and the first segment's stays.
	require.NoError(t, p.Truncate(abort2))
	require.Equal(t, []AbortedTxn{{ProducerID: 1, FirstOffset: 2, LastOffset: abort, LastStableOffset: abort + 1}}, p.AbortedTxns(0, p.EndOffset()))
	if has(second) {
		info, err := m.Stat(path(second))
		require.NoError(t, err)
		require.Zero(t, info.Size)
	}

	// Retention takes the first segment with its .txnindex.
	for len(p.Segments()) < 3 {
		plain(t, p, "filler-filler-filler-filler-filler-filler-filler-filler-filler-filler-filler-filler")
	}
	require.NoError(t, p.DeleteRecords(second))
	n, err := p.EnforceRetention(clock.Now(), retention.Policy{RetentionBytes: -1, RetentionMs: -1})
	require.NoError(t, err)
	require.Positive(t, n)
	require.False(t, has(0))
	_, err = m.Stat(path(0) + segment.DeletedSuffix)
	require.Error(t, err, "no reader held it: unlinked")
	require.Empty(t, p.AbortedTxns(0, p.EndOffset()))
}

// Under SyncAlways an ABORT is durable with its .txnindex entry when
// WriteMarker returns: after a power cut, read_committed readers still
// skip the transaction.
func TestTxnIndexDurableWithMarker(t *testing.T) {
	clock := newClock()
	cfg := small(clock)
	cfg.Sync = SyncAlways
	p, m := memPartition(t, cfg)
	w := newTxnWriter(t, p)
	plain(t, p, "n0")
	w.write(1, 0, 2)
	w.end(1, false)
	plain(t, p, "n1")
	after := m.Crash()
	p2, err := Open(after, "topic-0", cfg, false)
	require.NoError(t, err)
	defer p2.Close()
	require.Equal(t, p.EndOffset(), p2.EndOffset())
	require.Len(t, p2.AbortedTxns(0, p2.EndOffset()), 1)
	require.Equal(t, []string{"n0", "n1"}, values(readIso(t, p2, 0, ReadCommitted)))
}

// An entry replayed into a sealed segment (the producer state rebuilt from
// the log after a crash) is not written twice, and is durable at once.
func TestTxnIndexReplayIntoSealedSegment(t *testing.T) {
	clock := newClock()
	cfg := small(clock)
	p, m := memPartition(t, cfg)
	w := newTxnWriter(t, p)
	w.write(1, 0, 1)
	w.end(1, false)
	for len(p.Segments()) < 2 {
		plain(t, p, "filler-filler-filler-filler-filler-filler-filler-filler-filler-filler-filler-filler")
	}
	entries := p.AbortedTxns(0, p.EndOffset())
	require.Len(t, entries, 1)
	replay := func(p *Partition) {
		p.mu.Lock()
		defer p.mu.Unlock()
		require.NoError(t, p.addAbortedMuLocked(entries[0]))
	}
	replay(p)
	require.Equal(t, entries, p.AbortedTxns(0, p.EndOffset()), "not twice")
	require.NoError(t, p.Close())

	// The entry lost, then replayed: it survives a crash of the OS.
	path := filepath.Join("topic-0", segment.FileName(0, segment.TxnIndexSuffix))
	require.NoError(t, m.Remove(path))
	require.NoError(t, m.SyncDir("topic-0"))
	p, err := Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	require.Empty(t, p.AbortedTxns(0, p.EndOffset()))
	replay(p)
	after := m.Crash()
	p2, err := Open(after, "topic-0", cfg, true)
	require.NoError(t, err)
	require.Equal(t, entries, p2.AbortedTxns(0, p2.EndOffset()))
	require.NoError(t, p2.Close())
	_ = p.Close() // its file system crashed
}
