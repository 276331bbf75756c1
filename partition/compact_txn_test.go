package partition

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// latestByKey returns the value of each key's last record in recs, the
// fillers' left out.
func latestByKey(recs []log.Record) map[string]string {
	out := map[string]string{}
	for _, r := range recs {
		if string(r.Key) != "filler" {
			out[string(r.Key)] = string(r.Value)
		}
	}
	return out
}

// A compacted topic where a transaction aborted a newer value of a key:
// compaction removes the aborted value and keeps the committed one it did
// not replace, at both isolation levels; a committed transaction's records
// are compacted as data.
func TestCompactAbortedValue(t *testing.T) {
	p, m, clock := compactedPartition(t)
	defer func() { p.Close() }()
	w := newTxnWriter(t, p)
	_, err := p.Append([]log.Record{{Key: []byte("account"), Value: []byte("balance=100")}})
	require.NoError(t, err)
	w.write(3, 0, 1) // k-3-0
	_, err = p.Append([]log.Record{{Key: []byte("k-3-0"), Value: []byte("plain")}})
	require.NoError(t, err)
	w.end(3, true)
	b, err := log.EncodeBatch(nil, []log.Record{{Key: []byte("account"), Value: []byte("balance=-50")}},
		log.BatchOptions{Idempotent: true, Transactional: true, ProducerID: 9, Now: clock.Now().UnixMilli()})
	require.NoError(t, err)
	_, err = p.AppendRawBatch(b) // as a Kafka client sends it
	require.NoError(t, err)
	w.end(9, false)
	for len(p.Segments()) < 3 {
		_, err := p.Append([]log.Record{{Key: []byte("filler"), Value: make([]byte, 500)}})
		require.NoError(t, err)
	}
	want := map[string]string{"account": "balance=100", "k-3-0": "plain"}
	require.Equal(t, want, latestByKey(readIso(t, p, 0, ReadCommitted)))

	st, err := p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	require.Equal(t, int64(1), st.Aborted)
	for _, iso := range []Isolation{ReadUncommitted, ReadCommitted} {
		recs := readIso(t, p, 0, iso)
		require.Equal(t, want, latestByKey(recs), "%v", iso)
		for _, r := range recs {
			require.NotEqual(t, "balance=-50", string(r.Value), "%v: the aborted value is gone", iso)
		}
	}
	// The cleaned segment holds the marker's .txnindex entry, swapped in
	// with it, and kept across a reopen.
	entries := p.AbortedTxns(0, p.EndOffset())
	require.Len(t, entries, 1, "kept with its marker for this cleaning")
	require.Equal(t, entries, p.state.Load().segs[0].seg.AbortedTxns())
	require.NoError(t, p.Close())
	cfg := small(clock)
	cfg.Compacted = true
	p, err = Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	require.Equal(t, entries, p.AbortedTxns(0, p.EndOffset()))
	require.Equal(t, want, latestByKey(readIso(t, p, 0, ReadCommitted)))

	// Once the aborted record is gone its marker is not needed, and goes
	// after its delete horizon with its .txnindex entry.
	for n := len(p.Segments()); len(p.Segments()) == n; {
		_, err := p.Append([]log.Record{{Key: []byte("filler"), Value: make([]byte, 500)}})
		require.NoError(t, err)
	}
	_, err = p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	require.Empty(t, p.AbortedTxns(0, p.EndOffset()))
	require.Equal(t, want, latestByKey(readIso(t, p, 0, ReadCommitted)))
}

// Compaction stops at the last stable offset: nothing from the first
// record of an open transaction on is mapped, so no record is superseded
// by one a reader cannot see yet; once the transaction commits, its
// records are compacted as data.
func TestCompactStopsAtLSO(t *testing.T) {
	p, _, clock := compactedPartition(t)
	defer p.Close()
	w := newTxnWriter(t, p)
	put := func(v string) {
		_, err := p.Append([]log.Record{{Key: []byte("k-1-0"), Value: []byte(v)}})
		require.NoError(t, err)
	}
	put("v0")
	lso := w.write(1, 0, 1) // k-1-0 = p1-0, open
	put("v2")
	for len(p.Segments()) < 3 {
		_, err := p.Append([]log.Record{{Key: []byte("filler"), Value: make([]byte, 500)}})
		require.NoError(t, err)
	}
	require.Equal(t, lso, p.LastStableOffset())
	_, err := p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	var vals []string
	for _, r := range readIso(t, p, 0, ReadUncommitted) {
		if string(r.Key) == "k-1-0" {
			vals = append(vals, string(r.Value))
		}
	}
	require.Equal(t, []string{"v0", "p1-0", "v2"}, vals, "nothing at or past the LSO supersedes")

	w.end(1, true)
	for n := len(p.Segments()); len(p.Segments()) == n; {
		_, err := p.Append([]log.Record{{Key: []byte("filler"), Value: make([]byte, 500)}})
		require.NoError(t, err)
	}
	_, err = p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"k-1-0": "v2"}, latestByKey(readIso(t, p, 0, ReadCommitted)))
	vals = nil
	for _, r := range readIso(t, p, 0, ReadUncommitted) {
		if string(r.Key) == "k-1-0" {
			vals = append(vals, string(r.Value))
		}
	}
	require.Equal(t, []string{"v2"}, vals, "the committed record is data, superseded like any")
}

// A crash at any write, fsync, rename or removal of a compaction over
// transactions leaves a partition whose read_committed readers see no
// aborted record and the latest committed value of every key, and whose
// .txnindex still names every aborted record left.
func TestCrashDuringCompactionWithTransactions(t *testing.T) {
	ops := []vfs.Op{vfs.OpWrite, vfs.OpWriteMap, vfs.OpAllocate, vfs.OpSync, vfs.OpSyncDir, vfs.OpRename, vfs.OpRemove, vfs.OpCreate, vfs.OpTruncate, vfs.OpSyncMap}
	build := func() (*Partition, *vfs.Mem, *fakeClock, map[string]string, map[string]bool) {
		p, m, clock := compactedPartition(t)
		w := newTxnWriter(t, p)
		latest, aborted := map[string]string{}, map[string]bool{}
		for i := range 60 {
			pid := int64(i % 3)
			w.write(pid, i, 2)
			commit := i%4 != 1
			for _, n := range []int{i, i + 1} {
				r := txnRec(pid, n)
				if commit {
					latest[string(r.Key)] = string(r.Value)
				} else {
					aborted[string(r.Value)] = true
				}
			}
			w.end(pid, commit)
			v := fmt.Sprint("plain-", i)
			_, err := p.Append([]log.Record{{Key: []byte("plain"), Value: []byte(v)}})
			require.NoError(t, err)
			latest["plain"] = v
		}
		require.NoError(t, p.Sync())
		return p, m, clock, latest, aborted
	}
	p, m, clock, _, _ := build()
	before := opsIn(m, ops)
	st, err := p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	require.Positive(t, st.Aborted)
	total := opsIn(m, ops) - before
	require.Positive(t, total)

	for k := 0; k <= total; k++ {
		p, m, clock, latest, aborted := build()
		end := p.EndOffset()
		m.SetInjector(vfs.FailAfter(k, ops...))
		_, _ = p.Compact(clock.Now(), eager)
		after := m.Crash()
		cfg := small(clock)
		cfg.Compacted = true
		p2, err := Open(after, "topic-0", cfg, false)
		require.NoError(t, err, "k=%d", k)
		require.Equal(t, end, p2.EndOffset(), "k=%d", k)
		recs := readIso(t, p2, 0, ReadCommitted)
		for _, r := range recs {
			require.False(t, aborted[string(r.Value)], "k=%d: aborted %s read committed", k, r.Value)
		}
		require.Equal(t, latest, latestByKey(recs), "k=%d", k)
		require.NoError(t, p2.Close())
	}
}
