package strata_test

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// Under SyncAlways a transaction fsyncs each partition it writes to once,
// and its decision once: a marker is not waited for, and becomes durable
// with the id's next records in its partition, or before the id's next
// decision in a partition the next transaction does not write to. Readers
// see each transaction as soon as its Commit returns.
func TestTxnFsyncsUnderSyncAlways(t *testing.T) {
	s := openTxnStore(t, vfs.NewMem(), strata.SyncAlways)
	require.NoError(t, s.CreateTopic("in", strata.TopicConfig{}))
	_, err := s.AppendTo(ctx, "in", 0, vals("in", 10)...)
	require.NoError(t, err)
	one := []strata.TopicPartition{{Topic: "a", Partition: 0}}
	three := []strata.TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}}
	n := 0
	commit := func(parts []strata.TopicPartition) int64 {
		t.Helper()
		n++
		before := benchFsyncs(s)
		tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "relay"})
		require.NoError(t, err)
		for _, tp := range parts {
			require.NoError(t, tx.AppendTo(ctx, tp.Topic, tp.Partition, strata.Record{Value: fmt.Appendf(nil, "t%d", n)}))
		}
		require.NoError(t, tx.CommitOffsets(ctx, "g", map[strata.TopicPartition]int64{{Topic: "in", Partition: 0}: int64(n)}))
		require.NoError(t, tx.Commit(ctx))
		for _, tp := range parts {
			require.Contains(t, readCommitted(t, s, tp.Topic, tp.Partition), fmt.Sprintf("t%d", n), "visible once Commit returns")
			p, err := strata.PartitionOf(s, tp.Topic, tp.Partition)
			require.NoError(t, err)
			require.Equal(t, p.EndOffset(), p.LastStableOffset())
		}
		om, ok := s.Committed("g", "in", 0)
		require.True(t, ok)
		require.Equal(t, int64(n), om.Offset)
		return benchFsyncs(s) - before
	}
	commit(one) // the first: the transaction state's topic is created
	for range 3 {
		require.Equal(t, int64(3), commit(one), "its partition, the offsets' and the decision")
	}
	require.Equal(t, int64(5), commit(three), "three partitions, the offsets' and the decision")
	require.Equal(t, int64(5), commit(one), "and the two markers the last transaction left in partitions this one does not write to")
	require.Equal(t, int64(3), commit(one))
}

// txnSyncStore opens a store under SyncAlways on m whose topics a (2
// partitions) and b roll every few KiB, and whose topic a takes batches of
// at most 1 KiB, so that a transaction writes to it before its Commit.
func txnSyncStore(t *testing.T, m *vfs.Mem, create bool) *strata.Store {
	t.Helper()
	s := openCond(t, m, &strata.Options{Sync: strata.SyncAlways, RetentionCheckInterval: -1, CleanerInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if create {
		require.NoError(t, s.CreateTopic("a", strata.TopicConfig{Partitions: 2, SegmentBytes: 4096, MaxBatchBytes: 1024}))
		require.NoError(t, s.CreateTopic("b", strata.TopicConfig{Partitions: 1, SegmentBytes: 4096}))
		require.NoError(t, s.CreateTopic("in", strata.TopicConfig{}))
		_, err := s.AppendTo(ctx, "in", 0, vals("in", 10)...)
		require.NoError(t, err)
	}
	return s
}

// txnSyncFirst commits the crash tests' first transaction of id "relay"
// over a-0 and b-0 with the offset 1 of group g, and returns the offset
// of its marker in b-0, which it checks is not durable.
func txnSyncFirst(t *testing.T, s *strata.Store) int64 {
	t.Helper()
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "relay"})
	require.NoError(t, err)
	require.NoError(t, tx.AppendTo(ctx, "a", 0, vals("t1.a", 2)...))
	require.NoError(t, tx.AppendTo(ctx, "b", 0, vals("t1.b", 2)...))
	require.NoError(t, tx.CommitOffsets(ctx, "g", map[strata.TopicPartition]int64{{Topic: "in", Partition: 0}: 1}))
	require.NoError(t, tx.Commit(ctx))
	b, err := strata.PartitionOf(s, "b", 0)
	require.NoError(t, err)
	marker := b.EndOffset() - 1
	require.Equal(t, marker, b.SyncedOffset(), "the marker in b-0 is not durable")
	return marker
}

// txnSyncEarly begins the second transaction of id "relay" and has it
// write a batch to a-0 before its Commit (it fills a batch of a).
func txnSyncEarly(t *testing.T, s *strata.Store) *strata.Txn {
	t.Helper()
	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "relay"})
	require.NoError(t, err)
	a, err := strata.PartitionOf(s, "a", 0)
	require.NoError(t, err)
	end := a.EndOffset()
	for i := 0; a.EndOffset() == end; i++ {
		require.NoError(t, tx.AppendTo(ctx, "a", 0, strata.Record{Value: fmt.Appendf(nil, "t2.a%d.%0100d", i, 0)}))
	}
	return tx
}

// checkTxnSyncFirst checks a reopened store: the first transaction is
// whole, in both partitions, with its offset; what is open is aborted.
func checkTxnSyncFirst(t *testing.T, s *strata.Store, at string) {
	t.Helper()
	require.Equal(t, strs("t1.a", 2), readCommitted(t, s, "a", 0), at)
	require.Equal(t, strs("t1.b", 2), readCommitted(t, s, "b", 0), at)
	om, ok := s.Committed("g", "in", 0)
	require.True(t, ok, at)
	require.Equal(t, int64(1), om.Offset, at)
	for _, tp := range []strata.TopicPartition{{Topic: "a", Partition: 0}, {Topic: "b", Partition: 0}} {
		p, err := strata.PartitionOf(s, tp.Topic, tp.Partition)
		require.NoError(t, err)
		require.Equal(t, p.EndOffset(), p.LastStableOffset(), "%s %v", at, tp)
	}
}

// A crash while a committed transaction's marker is not durable yet, and
// the id's next transaction is open (its Ongoing record and a batch
// written, the marker in the partition it wrote to made durable with it):
// the first is committed whole after recovery, from its decision, and the
// second aborted.
func TestTxnCrashMarkerNotDurableNextOngoing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := vfs.NewMem()
		s := txnSyncStore(t, m, true)
		txnSyncFirst(t, s)
		txnSyncEarly(t, s)
		after := m.Crash()
		_ = s.Close()
		s2 := txnSyncStore(t, after, false)
		checkTxnSyncFirst(t, s2, "")
	})
}

// A crash once the id's next transaction is decided: the last
// transaction's marker in a partition the next one did not write to is
// made durable before the decision, which takes the place of the one it
// would be rebuilt from. Both transactions are whole after recovery,
// whether the crash keeps the unsynced tail of each file or not, and also
// when the transaction state's background fsync came first; the next
// transaction is a two-phase one, then one of a single batch, whose
// decision is not fsynced but may survive.
func TestTxnCrashNextDeciding(t *testing.T) {
	for _, onePhase := range []bool{false, true} {
		t.Run(fmt.Sprint("onePhase=", onePhase), func(t *testing.T) {
			t.Parallel()
			for seed := range 10 {
				at := fmt.Sprint("crash ", seed)
				synctest.Test(t, func(t *testing.T) {
					m := vfs.NewMem()
					s := txnSyncStore(t, m, true)
					txnSyncFirst(t, s)
					tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "relay"})
					require.NoError(t, err)
					require.NoError(t, tx.AppendTo(ctx, "a", 1, vals("t2.a", 2)...))
					if !onePhase {
						require.NoError(t, tx.CommitOffsets(ctx, "g", map[strata.TopicPartition]int64{{Topic: "in", Partition: 0}: 2}))
					}
					require.NoError(t, tx.Commit(ctx))
					if seed == 0 {
						// The transaction state's background fsync.
						p, err := strata.PartitionOf(s, strata.TransactionStateTopic, 0)
						require.NoError(t, err)
						require.NoError(t, p.Sync())
					}
					after := m.Crash()
					if seed > 1 {
						after = m.CrashKeepingPrefix(rand.New(rand.NewPCG(uint64(seed), 1)))
					}
					_ = s.Close()
					s2 := txnSyncStore(t, after, false)
					require.Equal(t, strs("t1.a", 2), readCommitted(t, s2, "a", 0), at)
					require.Equal(t, strs("t1.b", 2), readCommitted(t, s2, "b", 0), at)
					require.Equal(t, strs("t2.a", 2), readCommitted(t, s2, "a", 1), at)
					om, ok := s2.Committed("g", "in", 0)
					require.True(t, ok, at)
					want := int64(2)
					if onePhase {
						want = 1
					}
					require.Equal(t, want, om.Offset, at)
				})
			}
		})
	}
}

// A cleaning of __transaction_state keeps only each id's last record: the
// markers of the transactions whose decision it may take away are made
// durable before it. Here the id's next transaction is open (its Ongoing
// record is the id's last), the cleaning drops the first one's records,
// and a crash follows: the first transaction is whole after recovery.
func TestTxnCrashTxnStateCompacted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := vfs.NewMem()
		s := txnSyncStore(t, m, true)
		strata.SetTxnLogSegmentBytes(s, 1024)
		txnSyncFirst(t, s)
		txnSyncEarly(t, s)
		// Other ids fill the transaction state's segments, so that the
		// records of "relay" are in sealed ones, superseded.
		for i := range 20 {
			tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: fmt.Sprint("other-", i%4)})
			require.NoError(t, err)
			require.NoError(t, tx.AppendTo(ctx, "a", 1, strata.Record{Value: []byte("x")}))
			require.NoError(t, tx.Commit(ctx))
		}
		st, err := s.Compact(ctx, strata.TransactionStateTopic)
		require.NoError(t, err)
		require.Positive(t, st.Superseded, "the cleaning dropped records")
		after := m.Crash()
		_ = s.Close()
		s2 := txnSyncStore(t, after, false)
		checkTxnSyncFirst(t, s2, "")
	})
}
