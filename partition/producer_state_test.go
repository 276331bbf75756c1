package partition

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/retention"
	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// retentionNone is a retention policy that deletes only below the start
// offset.
var retentionNone = retention.Policy{RetentionMs: -1, RetentionBytes: -1}

// snapshotNames lists the producer snapshots in the partition's directory.
func snapshotNames(t testing.TB, fsys vfs.FS, dir string) []int64 {
	t.Helper()
	names, err := fsys.ReadDir(dir)
	require.NoError(t, err)
	return snapshotOffsets(names)
}

// TestSnapshotRoundTrip: a snapshot gives back the state it was taken of:
// every remembered batch (sequences wrapping), epochs, timestamps,
// coordinator epochs and open transactions.
func TestSnapshotRoundTrip(t *testing.T) {
	var ps producerState
	for i := range 7 {
		ps.applyData(log.BatchHeader{ProducerID: 1, ProducerEpoch: 3, BaseSequence: log.IncrementSequence(math.MaxInt32-6, int32(3*i)),
			BaseOffset: int64(10 * i), LastOffsetDelta: 2, MaxTimestamp: int64(1000 + i)}, nil)
	}
	ps.applyData(log.BatchHeader{ProducerID: 2, ProducerEpoch: 0, BaseSequence: 0, BaseOffset: 100, MaxTimestamp: 5,
		Attributes: log.AttrTransactional, NumRecords: 1}, nil)
	ps.applyMarker(3, 9, 4, 101, 77, false)
	got, err := decodeSnapshot(encodeSnapshot(&ps))
	require.NoError(t, err)
	require.Equal(t, ps.txns, got.txns)
	require.Len(t, got.entries, 3)
	batches := func(e *producerEntry) (out []producerBatchMeta) {
		for i := range e.n {
			out = append(out, e.batch(i))
		}
		return out
	}
	for id, e := range ps.entries {
		g := got.entries[id]
		require.Equal(t, batches(e), batches(g), "producer %d", id)
		require.Equal(t, [5]int64{e.id, int64(e.epoch), e.lastTimestamp, int64(e.coordinatorEpoch), e.txnFirst},
			[5]int64{g.id, int64(g.epoch), g.lastTimestamp, int64(g.coordinatorEpoch), g.txnFirst}, "producer %d", id)
	}
	require.Len(t, batches(ps.entries[1]), 5)
	require.Equal(t, int32(math.MaxInt32-6+3*2), batches(ps.entries[1])[0].firstSeq)

	b := encodeSnapshot(&ps)
	b[len(b)-1] ^= 1
	_, err = decodeSnapshot(b)
	require.ErrorIs(t, err, ErrCorruptSnapshot)
	require.ErrorIs(t, err, log.ErrCorrupt)
	_, err = decodeSnapshot(b[:5])
	require.ErrorIs(t, err, ErrCorruptSnapshot)
}

// TestProducerStateSurvivesClose: after a clean Close and Open the
// partition answers retries of each of the last 5 batches of every
// producer, continues their sequences, keeps their epochs and open
// transactions, and reads no log to know it (a snapshot at the end).
func TestProducerStateSurvivesClose(t *testing.T) {
	cfg := small(newClock())
	p, m := memPartition(t, cfg)
	bases := map[int32]int64{}
	const batches = 120
	for i := range batches {
		base, _, err := produce(t, p, 1, 2, int32(2*i), 2) // rolls every few KiB
		require.NoError(t, err)
		bases[int32(2*i)] = base
	}
	txnFirst, _, err := p.AppendProduced(recs(0, 1), ProducerBatch{ID: 2, Seq: 0, Transactional: true}, log.None, 0)
	require.NoError(t, err)
	require.Greater(t, len(p.Segments()), 3)
	end := p.EndOffset()
	require.NoError(t, p.Close())
	require.Contains(t, snapshotNames(t, m, "topic-0"), end)

	p, err = Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	defer p.Close()
	for s := int32(2 * (batches - 5)); s < 2*batches; s += 2 {
		base, dup, err := produce(t, p, 1, 2, s, 2)
		require.NoError(t, err)
		require.True(t, dup, "sequence %d", s)
		require.Equal(t, bases[s], base)
	}
	_, _, err = produce(t, p, 1, 2, 2*(batches-6), 2)
	require.ErrorIs(t, err, ErrOutOfOrderSequence)
	_, _, err = produce(t, p, 1, 1, 2*batches, 1)
	require.ErrorIs(t, err, ErrProducerFenced)
	_, _, err = produce(t, p, 1, 2, 2*batches, 1)
	require.NoError(t, err)
	require.Equal(t, txnFirst, p.LastStableOffset())
	_, _, err = produce(t, p, 2, 0, 1, 1)
	require.ErrorIs(t, err, ErrInvalidTxnState)
	require.Equal(t, end+1, p.EndOffset())
}

// TestProducerStateOpenWithoutSnapshot: a clean Open with no snapshot
// (a partition written before producer state, or by a Kafka that kept
// none) takes the state for empty without reading the log, as Kafka does;
// after a crash it rebuilds the state from the whole log.
func TestProducerStateOpenWithoutSnapshot(t *testing.T) {
	cfg := small(newClock())
	p, m := memPartition(t, cfg)
	for i := range 30 {
		_, _, err := produce(t, p, 1, 0, int32(i), 1)
		require.NoError(t, err)
	}
	require.NoError(t, p.Close())
	for _, off := range snapshotNames(t, m, "topic-0") {
		require.NoError(t, m.Remove(filepath.Join("topic-0", segment.FileName(off, snapshotSuffix))))
	}
	p, err := Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	require.Empty(t, p.Producers())
	require.NoError(t, p.Close())

	p, err = Open(m, "topic-0", cfg, false)
	require.NoError(t, err)
	defer p.Close()
	_, dup, err := produce(t, p, 1, 0, 29, 1)
	require.NoError(t, err)
	require.True(t, dup, "rebuilt from the log")
}

// crashProducerWorkload appends batches of one to three records for
// producer 1 under SyncAlways, each retried once, until an append fails.
// It returns the base offset and sequence of every acknowledged batch.
func crashProducerWorkload(p *Partition) (acked []producerBatchMeta) {
	s := int32(0)
	if info := p.Producers(); len(info) > 0 {
		s = log.IncrementSequence(info[0].LastSequence, 1)
	}
	for i := range 60 {
		n := 1 + i%3
		pb := ProducerBatch{ID: 1, Epoch: 0, Seq: s}
		base, _, err := p.AppendProduced(recs(int(s), n), pb, log.None, 0)
		if err != nil {
			return acked
		}
		if again, dup, err := p.AppendProduced(recs(int(s), n), pb, log.None, 0); err != nil || !dup || again != base {
			panic("retry not answered with the original offset")
		}
		acked = append(acked, producerBatchMeta{firstSeq: s, lastSeq: s + int32(n) - 1, firstOffset: base})
		s += int32(n)
	}
	return acked
}

// TestProducerStateCrashAtEveryOperation crashes the in-memory file system
// at the k-th write, sync, rename or removal of a workload of idempotent
// appends with retries and rolls (each writing a snapshot), for every k,
// then reopens the partition as after a crash: every acknowledged batch is
// there once, the producer's retry of its last acknowledged batch is
// answered with the original offset, and its sequence goes on where the
// log ends.
func TestProducerStateCrashAtEveryOperation(t *testing.T) {
	cfg := small(newClock())
	cfg.Sync = SyncAlways
	m := vfs.NewMem()
	m.SetInjector(vfs.FailAfter(1<<30, crashOps...))
	p, err := Open(m, "t-0", cfg, false)
	require.NoError(t, err)
	require.Len(t, crashProducerWorkload(p), 60)
	require.GreaterOrEqual(t, len(p.Segments()), 3, "the workload rolls")
	total := opsIn(m, crashOps)

	for k := 0; k <= total; k++ {
		for _, torn := range []string{"none", "prefix"} {
			m := vfs.NewMem()
			m.SetInjector(vfs.FailAfter(k, crashOps...))
			var acked []producerBatchMeta
			if p, err := Open(m, "t-0", cfg, false); err == nil {
				acked = crashProducerWorkload(p)
			}
			after := m.Crash()
			if torn == "prefix" {
				after = m.CrashKeepingPrefix(newRand(k))
			}
			p2, err := Open(after, "t-0", cfg, false)
			require.NoError(t, err, "k=%d torn=%s", k, torn)
			all := readRange(t, p2, 0)
			for i, r := range all {
				require.Equal(t, rec(i).Key, r.Key, "k=%d torn=%s: offset %d", k, torn, r.Offset)
			}
			if n := len(acked); n > 0 {
				last := acked[n-1]
				require.GreaterOrEqual(t, int64(len(all)), last.firstOffset+int64(last.lastSeq-last.firstSeq)+1, "k=%d torn=%s: acknowledged records lost", k, torn)
				base, dup, err := p2.AppendProduced(recs(int(last.firstSeq), int(last.lastSeq-last.firstSeq)+1),
					ProducerBatch{ID: 1, Seq: last.firstSeq}, log.None, 0)
				require.NoError(t, err, "k=%d torn=%s", k, torn)
				require.True(t, dup, "k=%d torn=%s", k, torn)
				require.Equal(t, last.firstOffset, base, "k=%d torn=%s", k, torn)
			}
			next := int32(len(all)) // one sequence number per record, from 0
			_, dup, err := p2.AppendProduced(recs(int(next), 1), ProducerBatch{ID: 1, Seq: next}, log.None, 0)
			require.NoError(t, err, "k=%d torn=%s: the sequence goes on at the log's end", k, torn)
			require.False(t, dup)
			require.NoError(t, p2.Close())
		}
	}
}

// TestKafkaSnapshotRead: a partition directory as Kafka leaves it, with a
// snapshot at the log end offset holding a producer's last batch and its
// open transaction, opens with that state: the retry of the batch is
// answered, the transaction keeps the last stable offset down until a
// marker ends it. Kafka's empty snapshots at each segment's base are read
// too, with the log after the last one.
func TestKafkaSnapshotRead(t *testing.T) {
	ts := time.UnixMilli(1_700_000_000_000)
	dir := filepath.Join(t.TempDir(), "orders-0")
	k := kafkadir.New(dir)
	k.Roll(0)
	k.Append(kafkadir.Batch(0, 4, kafkadir.Records(0, 5, ts), kafkadir.Opts{ProducerID: 42, ProducerEpoch: 3, BaseSequence: 0}))
	k.Roll(5)
	k.Append(kafkadir.Batch(5, 6, kafkadir.Records(5, 2, ts), kafkadir.Opts{ProducerID: 42, ProducerEpoch: 3, BaseSequence: 5, Transactional: true}))
	k.Append(kafkadir.Batch(7, 9, kafkadir.Records(7, 3, ts), kafkadir.Opts{ProducerID: 8, ProducerEpoch: 0, BaseSequence: 10}))
	_, err := k.Write(kafkadir.Files{Extras: true})
	require.NoError(t, err)
	cfg := small(newClock())
	cfg.Now = func() time.Time { return ts.Add(time.Minute) }

	t.Run("snapshots at the segments' bases", func(t *testing.T) {
		p, err := Open(vfs.OS, dir, cfg, true)
		require.NoError(t, err)
		defer p.Close()
		// The empty snapshot at 5 is the latest: the log after it gives
		// both producers' batches there.
		require.Equal(t, int64(5), p.LastStableOffset())
		_, dup, err := p.AppendRawBatchProduced(kafkadir.Batch(0, 2, kafkadir.Records(0, 3, ts), kafkadir.Opts{ProducerID: 8, ProducerEpoch: 0, BaseSequence: 10}))
		require.NoError(t, err)
		require.True(t, dup)
	})

	snap := kafkadir.Snapshot([]kafkadir.ProducerEntry{
		{ProducerID: 8, Epoch: 0, LastSequence: 12, LastOffset: 9, OffsetDelta: 2, Timestamp: ts.UnixMilli(), CoordinatorEpoch: -1, TxnFirstOffset: -1},
		{ProducerID: 42, Epoch: 3, LastSequence: 6, LastOffset: 6, OffsetDelta: 1, Timestamp: ts.UnixMilli(), CoordinatorEpoch: 2, TxnFirstOffset: 5},
	})
	require.NoError(t, os.WriteFile(filepath.Join(dir, segment.FileName(10, ".snapshot")), snap, 0o644))
	t.Run("snapshot at the end", func(t *testing.T) {
		p, err := Open(vfs.OS, dir, cfg, true)
		require.NoError(t, err)
		defer p.Close()
		require.Equal(t, []ProducerInfo{
			{ID: 8, Epoch: 0, LastSequence: 12, LastOffset: 9, LastTimestamp: ts.UnixMilli(), CoordinatorEpoch: -1, TxnFirstOffset: -1},
			{ID: 42, Epoch: 3, LastSequence: 6, LastOffset: 6, LastTimestamp: ts.UnixMilli(), CoordinatorEpoch: 2, TxnFirstOffset: 5},
		}, p.Producers())
		require.Equal(t, int64(5), p.LastStableOffset())
		base, dup, err := p.AppendRawBatchProduced(kafkadir.Batch(0, 1, kafkadir.Records(0, 2, ts), kafkadir.Opts{ProducerID: 42, ProducerEpoch: 3, BaseSequence: 5, Transactional: true}))
		require.NoError(t, err)
		require.True(t, dup)
		require.Equal(t, int64(5), base)
		_, err = p.WriteMarker(42, 3, true, 1)
		require.ErrorIs(t, err, ErrCoordinatorFenced)
		_, err = p.WriteMarker(42, 3, true, 2)
		require.NoError(t, err)
		require.Equal(t, p.EndOffset(), p.LastStableOffset())
	})
}

// TestProducerExpiry: a producer idle for ProducerIDExpiration is
// forgotten (by ExpireProducers, EnforceRetention and Open), unless it has
// a transaction open; a forgotten producer starts anew at any sequence.
func TestProducerExpiry(t *testing.T) {
	clock := newClock()
	cfg := small(clock)
	cfg.ProducerIDExpiration = time.Hour
	p, m := memPartition(t, cfg)
	_, _, err := produce(t, p, 1, 0, 0, 1)
	require.NoError(t, err)
	_, _, err = p.AppendProduced(recs(1, 1), ProducerBatch{ID: 2, Transactional: true}, log.None, 0)
	require.NoError(t, err)
	clock.Add(30 * time.Minute)
	_, _, err = produce(t, p, 3, 0, 0, 1)
	require.NoError(t, err)

	clock.Add(30*time.Minute - time.Millisecond)
	require.Equal(t, 0, p.ExpireProducers(clock.Now()))
	clock.Add(time.Millisecond)
	require.Equal(t, 1, p.ExpireProducers(clock.Now()), "producer 1, an hour idle; producer 2 has a transaction open")
	_, dup, err := produce(t, p, 1, 0, 0, 1)
	require.NoError(t, err)
	require.False(t, dup, "forgotten: its retry is a new batch")
	_, _, err = produce(t, p, 1, 0, 7, 1)
	require.ErrorIs(t, err, ErrOutOfOrderSequence, "and its sequence goes on from there")

	clock.Add(30 * time.Minute)
	_, err = p.EnforceRetention(clock.Now(), retentionNone)
	require.NoError(t, err)
	ids := func() (out []int64) {
		for _, info := range p.Producers() {
			out = append(out, info.ID)
		}
		return out
	}
	require.Equal(t, []int64{1, 2}, ids(), "producer 3 went")
	require.NoError(t, p.Close())

	clock.Add(time.Hour)
	p, err = Open(m, "topic-0", cfg, true)
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, []int64{2}, ids(), "Open forgets the producers that expired meanwhile")
}

// TestProducerSnapshotsFollowTheLog: rolls write snapshots; retention
// removes those below the first segment left (but never the latest);
// Truncate removes those past its offset and reloads the state from the
// latest one left.
func TestProducerSnapshotsFollowTheLog(t *testing.T) {
	clock := newClock()
	cfg := small(clock)
	p, m := memPartition(t, cfg)
	defer p.Close()
	for i := range 200 {
		_, _, err := produce(t, p, 1, 0, int32(i), 1)
		require.NoError(t, err)
	}
	require.NoError(t, p.Sync())
	segs := p.Segments()
	require.Greater(t, len(segs), 3)
	var bases []int64
	for _, s := range segs[1:] {
		bases = append(bases, s.Base)
	}
	require.Equal(t, bases, snapshotNames(t, m, "topic-0"), "a snapshot at each roll")

	cut := segs[2].Base + 1
	require.NoError(t, p.Truncate(cut))
	require.Equal(t, []int64{segs[1].Base, segs[2].Base}, snapshotNames(t, m, "topic-0"))
	info := p.Producers()
	require.Len(t, info, 1)
	require.Equal(t, int32(cut-1), info[0].LastSequence, "one record per sequence")
	_, dup, err := produce(t, p, 1, 0, int32(cut-1), 1)
	require.NoError(t, err)
	require.True(t, dup)

	require.NoError(t, p.DeleteRecords(segs[2].Base))
	require.Equal(t, []int64{segs[1].Base, segs[2].Base}, snapshotNames(t, m, "topic-0"), "DeleteRecords leaves them to retention")
	_, err = p.EnforceRetention(clock.Now(), retentionNone)
	require.NoError(t, err)
	require.Equal(t, []int64{segs[2].Base}, snapshotNames(t, m, "topic-0"))
}

// TestCompactionKeepsProducersLastBatch: compaction keeps the last batch
// of each producer the partition remembers, empty if its records are
// superseded, so that the producer's state is rebuilt from the log after
// a crash (Kafka's cleaner keeps it too).
func TestCompactionKeepsProducersLastBatch(t *testing.T) {
	clock := newClock()
	cfg := small(clock)
	cfg.Compacted = true
	p, m := memPartition(t, cfg)
	key := []byte("k")
	pb := ProducerBatch{ID: 5, Epoch: 1, Seq: 0}
	base, _, err := p.AppendProduced([]log.Record{{Key: key, Value: []byte("v0")}}, pb, log.None, 0)
	require.NoError(t, err)
	for i := range 200 {
		_, err := p.Append([]log.Record{{Key: key, Value: []byte{byte(i)}}})
		require.NoError(t, err)
	}
	st, err := p.Compact(clock.Now(), eager)
	require.NoError(t, err)
	require.Positive(t, st.Emptied, "the producer's batch is kept empty")
	// After a crash (no snapshot: they are removed) the state comes from
	// the log, where the empty batch still says who wrote it.
	require.NoError(t, p.Close())
	for _, off := range snapshotNames(t, m, "topic-0") {
		require.NoError(t, m.Remove(filepath.Join("topic-0", segment.FileName(off, snapshotSuffix))))
	}
	p, err = Open(m, "topic-0", cfg, false)
	require.NoError(t, err)
	defer p.Close()
	got, dup, err := p.AppendProduced([]log.Record{{Key: key, Value: []byte("v0")}}, pb, log.None, 0)
	require.NoError(t, err)
	require.True(t, dup)
	require.Equal(t, base, got)
}

// TestEmptyProducerBatch: an empty batch of a producer, which compaction
// leaves in the place of a producer's last batch, gives the producer's
// sequence when the state is rebuilt from the log but opens no
// transaction (its marker may be gone); a client's empty batch is refused.
func TestEmptyProducerBatch(t *testing.T) {
	ts := time.UnixMilli(1_700_000_000_000)
	dir := filepath.Join(t.TempDir(), "orders-0")
	k := kafkadir.New(dir)
	// As compaction leaves it: the header's fields, its max timestamp
	// included, and no record.
	empty, err := log.EncodeBatchWithHeader(nil, log.BatchHeader{
		PartitionLeaderEpoch: -1, Attributes: log.AttrTransactional, LastOffsetDelta: 2,
		BaseTimestamp: -1, MaxTimestamp: ts.UnixMilli(), ProducerID: 3, ProducerEpoch: 1, BaseSequence: 7,
	}, nil)
	require.NoError(t, err)
	k.Append(empty)
	k.Append(kafkadir.Batch(3, 3, kafkadir.Records(3, 1, ts), kafkadir.Opts{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}))
	_, err = k.Write(kafkadir.Files{})
	require.NoError(t, err)
	p, err := Open(vfs.OS, dir, small(newClock()), false)
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, int64(4), p.LastStableOffset())
	info := p.Producers()
	require.Len(t, info, 1)
	require.Equal(t, int32(9), info[0].LastSequence)
	require.Equal(t, int64(-1), info[0].TxnFirstOffset)

	_, err = p.AppendRawBatch(kafkadir.Batch(0, 0, nil, kafkadir.Opts{ProducerID: 3, ProducerEpoch: 1, BaseSequence: 10}))
	require.ErrorIs(t, err, ErrEmptyBatch)
	require.Equal(t, int64(4), p.EndOffset())
}
