package strata_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// TestTxnProducerAndBeginTxnFenceEachOther: a BeginTxn of a TxnProducer's
// id aborts the producer's open transaction and fences it, and an
// InitTxnProducer of a Txn's id aborts the Txn and fences it; the
// survivor commits.
func TestTxnProducerAndBeginTxnFenceEachOther(t *testing.T) {
	s := openTxnStore(t, vfs.NewMem(), strata.SyncNever)
	a0 := strata.TopicPartition{Topic: "a", Partition: 0}

	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, s.AddTxnPartitions(ctx, p, a0))
	_, _, err = s.AppendTxnBatch(ctx, p, "a", 0, txnBatch(p, 0, "wire"))
	require.NoError(t, err)
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "x"})
	require.NoError(t, err)
	pid, epoch := strata.TxnProducerOf(tx)
	require.Equal(t, p.ProducerID, pid, "the id's producer id")
	require.Greater(t, epoch, p.Epoch)
	_, _, err = s.AppendTxnBatch(ctx, p, "a", 0, txnBatch(p, 1, "wire 2"))
	require.ErrorIs(t, err, strata.ErrProducerFenced)
	require.ErrorIs(t, s.EndTxn(ctx, p, true), strata.ErrProducerFenced)
	require.ErrorIs(t, s.AddTxnPartitions(ctx, p, a0), strata.ErrProducerFenced)
	v := viewTxns(t, s, "a", 0)
	require.Equal(t, []string{"wire"}, v.aborted)
	require.Empty(t, v.open)

	require.NoError(t, tx.AppendTo(ctx, "a", 0, strata.Record{Value: []byte("txn")}))
	p2, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "x"})
	require.NoError(t, err)
	require.Greater(t, p2.Epoch, epoch)
	require.ErrorIs(t, tx.Commit(ctx), strata.ErrProducerFenced)
	require.NoError(t, s.AddTxnPartitions(ctx, p2, a0))
	_, _, err = s.AppendTxnBatch(ctx, p2, "a", 0, txnBatch(p2, 0, "wire 3"))
	require.NoError(t, err)
	require.NoError(t, s.EndTxn(ctx, p2, true))
	require.Equal(t, []string{"wire 3"}, readCommitted(t, s, "a", 0))
}

// TestTxnProducerRefusals: what a TxnProducer's calls refuse, each
// changing nothing in the partition.
func TestTxnProducerRefusals(t *testing.T) {
	s := openTxnStore(t, vfs.NewMem(), strata.SyncNever)
	a0 := strata.TopicPartition{Topic: "a", Partition: 0}
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "x"})
	require.NoError(t, err)

	_, _, err = s.AppendTxnBatch(ctx, p, "a", 0, txnBatch(p, 0, "v"))
	require.ErrorIs(t, err, strata.ErrInvalidTxnState, "no transaction open")
	require.ErrorIs(t, s.EndTxn(ctx, p, true), strata.ErrInvalidTxnState, "no transaction open")
	require.ErrorIs(t, s.CommitTxnOffsets(ctx, p, "g", nil), strata.ErrInvalidTxnState, "no transaction open")
	require.NoError(t, s.AddTxnPartitions(ctx, p, a0))
	_, _, err = s.AppendTxnBatch(ctx, p, "a", 1, txnBatch(p, 0, "v"))
	require.ErrorIs(t, err, strata.ErrInvalidTxnState, "a partition not added")
	plain, err := log.EncodeBatch(nil, []strata.Record{{Value: []byte("v")}}, log.BatchOptions{Idempotent: true, ProducerID: p.ProducerID, ProducerEpoch: p.Epoch})
	require.NoError(t, err)
	_, _, err = s.AppendTxnBatch(ctx, p, "a", 0, plain)
	require.ErrorIs(t, err, strata.ErrInvalidProducer, "not transactional")
	other := p
	other.Epoch++
	_, _, err = s.AppendTxnBatch(ctx, p, "a", 0, txnBatch(other, 0, "v"))
	require.ErrorIs(t, err, strata.ErrInvalidProducer, "another epoch than the producer's")
	_, _, err = s.AppendTxnBatch(ctx, other, "a", 0, txnBatch(other, 0, "v"))
	require.ErrorIs(t, err, strata.ErrProducerFenced, "an epoch the id does not have")
	stranger := strata.TxnProducer{ID: "x", ProducerID: p.ProducerID + 100, Epoch: p.Epoch}
	require.ErrorIs(t, s.AddTxnPartitions(ctx, stranger, a0), strata.ErrInvalidProducerIDMapping)
	require.ErrorIs(t, s.AddTxnPartitions(ctx, strata.TxnProducer{ID: "unknown"}, a0), strata.ErrInvalidProducerIDMapping)
	require.ErrorIs(t, s.EndTxn(ctx, strata.TxnProducer{ID: "unknown 2"}, true), strata.ErrInvalidProducerIDMapping)
	_, err = s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "unknown 3", Current: &p})
	require.ErrorIs(t, err, strata.ErrInvalidProducerIDMapping)
	states, err := s.Transactions(ctx)
	require.NoError(t, err)
	require.Len(t, states, 1)
	require.Equal(t, 1, strata.TxnEntries(s), "the unknown ids left nothing")
	require.Equal(t, strata.TxnState{ID: "x", State: "Ongoing", ProducerID: p.ProducerID, Epoch: p.Epoch, Timeout: strata.DefaultTxnTimeout,
		Start: states[0].Start, Partitions: []strata.TopicPartition{a0}}, states[0])
	require.ErrorIs(t, s.AddTxnPartitions(ctx, p, strata.TopicPartition{Topic: "a", Partition: 7}), strata.ErrUnknownPartition)
	_, err = s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "x", Current: &stranger})
	require.ErrorIs(t, err, strata.ErrInvalidProducerIDMapping)
	_, err = s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "x", Current: &other})
	require.ErrorIs(t, err, strata.ErrProducerFenced)
	_, err = s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "x", Timeout: time.Hour})
	require.ErrorIs(t, err, strata.ErrInvalidConfig)
	err = s.CommitTxnOffsets(ctx, p, "g", map[strata.TopicPartition]strata.OffsetAndMetadata{a0: {Offset: 5}})
	require.ErrorIs(t, err, strata.ErrOffsetOutOfRange)
	err = s.CommitTxnOffsets(ctx, p, "g", map[strata.TopicPartition]strata.OffsetAndMetadata{a0: {Metadata: string(make([]byte, 5000))}})
	require.ErrorIs(t, err, strata.ErrMetadataTooLarge)
	pa, err := strata.PartitionOf(s, "a", 0)
	require.NoError(t, err)
	require.Zero(t, pa.EndOffset(), "nothing written")

	// The producer is still good: its transaction commits.
	_, _, err = s.AppendTxnBatch(ctx, p, "a", 0, txnBatch(p, 0, "v"))
	require.NoError(t, err)
	require.NoError(t, s.EndTxn(ctx, p, true))
	require.NoError(t, s.EndTxn(ctx, p, true), "a retry")
	require.ErrorIs(t, s.EndTxn(ctx, p, false), strata.ErrInvalidTxnState, "the other decision")
	require.Equal(t, []string{"v"}, readCommitted(t, s, "a", 0))
}

// TestTxnProducerTimeout: a TxnProducer's transaction open past its
// timeout is aborted; the producer's calls are ErrTxnTimedOut until it
// starts again from its producer id and epoch (KIP-360), which fences no
// one else.
func TestTxnProducerTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := openTxnStore(t, vfs.NewMem(), strata.SyncNever)
		a0 := strata.TopicPartition{Topic: "a", Partition: 0}
		p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "x", Timeout: time.Second})
		require.NoError(t, err)
		require.NoError(t, s.AddTxnPartitions(ctx, p, a0))
		_, _, err = s.AppendTxnBatch(ctx, p, "a", 0, txnBatch(p, 0, "late"))
		require.NoError(t, err)
		pa, err := strata.PartitionOf(s, "a", 0)
		require.NoError(t, err)
		require.Less(t, pa.LastStableOffset(), pa.EndOffset())
		time.Sleep(time.Second + time.Millisecond)
		synctest.Wait()
		require.Equal(t, pa.EndOffset(), pa.LastStableOffset(), "the store aborted it")
		require.ErrorIs(t, s.EndTxn(ctx, p, true), strata.ErrTxnTimedOut)
		_, _, err = s.AppendTxnBatch(ctx, p, "a", 0, txnBatch(p, 1, "later"))
		require.ErrorIs(t, err, strata.ErrTxnTimedOut)
		require.Equal(t, []string{"late"}, viewTxns(t, s, "a", 0).aborted)

		p2, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "x", Timeout: time.Second, Current: &p})
		require.NoError(t, err)
		require.Equal(t, p.ProducerID, p2.ProducerID)
		require.Greater(t, p2.Epoch, p.Epoch)
		require.NoError(t, s.AddTxnPartitions(ctx, p2, a0))
		_, _, err = s.AppendTxnBatch(ctx, p2, "a", 0, txnBatch(p2, 0, "again"))
		require.NoError(t, err)
		require.NoError(t, s.EndTxn(ctx, p2, true))
		require.Equal(t, []string{"again"}, readCommitted(t, s, "a", 0))
		require.NoError(t, s.Close())
	})
}

// TestTxnProducerAcrossReopen: Close aborts a TxnProducer's open
// transaction, and after the reopen the id's producer keeps its producer
// id at a newer epoch; a producer of the epoch before is fenced.
func TestTxnProducerAcrossReopen(t *testing.T) {
	m := vfs.NewMem()
	s := openTxnStore(t, m, strata.SyncAlways)
	a0 := strata.TopicPartition{Topic: "a", Partition: 0}
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, s.AddTxnPartitions(ctx, p, a0))
	_, _, err = s.AppendTxnBatch(ctx, p, "a", 0, txnBatch(p, 0, "committed"))
	require.NoError(t, err)
	require.NoError(t, s.EndTxn(ctx, p, true))
	require.NoError(t, s.AddTxnPartitions(ctx, p, a0))
	_, _, err = s.AppendTxnBatch(ctx, p, "a", 0, txnBatch(p, 1, "open"))
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s = openTxnStore(t, m, strata.SyncAlways)
	require.ErrorIs(t, s.AddTxnPartitions(ctx, p, a0), strata.ErrProducerFenced)
	p2, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "x"})
	require.NoError(t, err)
	require.Equal(t, p.ProducerID, p2.ProducerID)
	require.Greater(t, p2.Epoch, p.Epoch)
	v := viewTxns(t, s, "a", 0)
	require.Equal(t, []string{"committed"}, v.committed)
	require.Equal(t, []string{"open"}, v.aborted)
}

// TestTxnProducerFsyncsUnderSyncAlways counts what a TxnProducer's
// transaction fsyncs under SyncAlways beside a Txn's (see
// TestTxnFsyncsUnderSyncAlways): the same, plus, from its second
// transaction at the epoch, the last one's markers and its Ongoing record
// before its first batch.
func TestTxnProducerFsyncsUnderSyncAlways(t *testing.T) {
	s := openTxnStore(t, vfs.NewMem(), strata.SyncAlways)
	require.NoError(t, s.CreateTopic("in", strata.TopicConfig{}))
	_, err := s.AppendTo(ctx, "in", 0, vals("in", 10)...)
	require.NoError(t, err)
	one := []strata.TopicPartition{{Topic: "a", Partition: 0}}
	three := []strata.TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}}
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay"})
	require.NoError(t, err)
	n := 0
	seqs := map[strata.TopicPartition]int32{}
	commit := func(parts []strata.TopicPartition) int64 {
		t.Helper()
		n++
		before := benchFsyncs(s)
		require.NoError(t, s.AddTxnPartitions(ctx, p, parts...))
		for _, tp := range parts {
			_, _, err := s.AppendTxnBatch(ctx, p, tp.Topic, tp.Partition, txnBatch(p, seqs[tp], fmt.Sprintf("t%d", n)))
			require.NoError(t, err)
			seqs[tp]++
		}
		require.NoError(t, s.AddTxnPartitions(ctx, p))
		require.NoError(t, s.CommitTxnOffsets(ctx, p, "g", map[strata.TopicPartition]strata.OffsetAndMetadata{{Topic: "in"}: {Offset: int64(n)}}))
		require.NoError(t, s.EndTxn(ctx, p, true))
		return benchFsyncs(s) - before
	}
	require.Equal(t, int64(3), commit(one), "the first at the epoch: its partition, the offsets' and the decision")
	for range 3 {
		require.Equal(t, int64(6), commit(one), "and the last one's markers (2) and its Ongoing record")
	}
	require.Equal(t, int64(8), commit(three), "three partitions, the offsets', the decision, two markers and the Ongoing record")
	require.Equal(t, int64(8), commit(one))
}

// TestTxnProducerMarkerFailure: an EndTxn whose decision is written but
// one of whose markers is not (an I/O error) says so; until the markers
// are written the id's next transaction is ErrConcurrentTxns, and a retry
// of the EndTxn, once the partition takes writes again, writes them: the
// transaction is committed whole.
func TestTxnProducerMarkerFailure(t *testing.T) {
	m := vfs.NewMem()
	var failing atomic.Bool
	m.SetInjector(func(op vfs.Op, path string) error {
		if failing.Load() && (op == vfs.OpWrite || op == vfs.OpWriteMap || op == vfs.OpAllocate) && strings.Contains(path, "/b-0/") {
			return vfs.ErrInjected
		}
		return nil
	})
	s := openTxnStore(t, m, strata.SyncNever)
	a0, b0 := strata.TopicPartition{Topic: "a", Partition: 0}, strata.TopicPartition{Topic: "b", Partition: 0}
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "x"})
	require.NoError(t, err)
	require.NoError(t, s.AddTxnPartitions(ctx, p, a0, b0))
	for _, tp := range []strata.TopicPartition{a0, b0} {
		_, _, err := s.AppendTxnBatch(ctx, p, tp.Topic, tp.Partition, txnBatch(p, 0, tp.Topic))
		require.NoError(t, err)
	}
	failing.Store(true)
	err = s.EndTxn(ctx, p, true)
	require.ErrorIs(t, err, vfs.ErrInjected)
	require.ErrorIs(t, s.AddTxnPartitions(ctx, p, a0), strata.ErrConcurrentTxns)
	require.Equal(t, []string{"a"}, readCommitted(t, s, "a", 0), "decided: its marker there is written")
	failing.Store(false)
	require.NoError(t, s.EndTxn(ctx, p, true), "the retry writes the missing marker")
	require.Equal(t, []string{"b"}, readCommitted(t, s, "b", 0))
	require.ErrorIs(t, s.EndTxn(ctx, p, false), strata.ErrInvalidTxnState)
	require.NoError(t, s.AddTxnPartitions(ctx, p, a0), "the next transaction")
}
