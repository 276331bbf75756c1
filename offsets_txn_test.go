package strata_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// txnOffsets is an offsets map of partitions 0 and 1 of topic t.
func txnOffsets(p0, p1 int64) map[strata.TopicPartition]strata.OffsetAndMetadata {
	return map[strata.TopicPartition]strata.OffsetAndMetadata{
		{Topic: "t", Partition: 0}: {Offset: p0, Metadata: "txn"},
		{Topic: "t", Partition: 1}: {Offset: p1, Metadata: "txn"},
	}
}

// committedPair returns group g's committed offsets of t-0 and t-1, -1
// for none.
func committedPair(s *strata.Store, g string) [2]int64 {
	var out [2]int64
	for p := range 2 {
		out[p] = -1
		if om, ok := s.Committed(g, "t", p); ok {
			out[p] = om.Offset
		}
	}
	return out
}

// TestTxnOffsetsReplay commits offsets in a transaction that commits,
// aborts or stays open, then reopens the store, after a clean close and
// after a crash: the replay of __consumer_offsets gives the offsets the
// transaction's end gave, or keeps them pending, for the transaction to
// end after the restart (after a clean close; a crash aborts it).
func TestTxnOffsetsReplay(t *testing.T) {
	for _, crash := range []bool{false, true} {
		for _, end := range []string{"commit", "abort", "open"} {
			t.Run(fmt.Sprintf("crash=%v/%s", crash, end), func(t *testing.T) {
				m := vfs.NewMem()
				opts := &strata.Options{FS: m, Sync: strata.SyncAlways, CleanerInterval: -1, RetentionCheckInterval: -1, Logger: logOnFailure(t)}
				s, err := strata.Open("/s", opts)
				require.NoError(t, err)
				require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
				for i := range 20 {
					_, err := s.AppendTo(ctx, "t", i%2, rec("k", fmt.Sprint(i)))
					require.NoError(t, err)
				}
				require.NoError(t, s.Commit("g", "t", 0, 1, ""))
				require.NoError(t, strata.CommitTxnOffsets(s, "g", 5, 0, txnOffsets(4, 4)))
				require.NoError(t, strata.CommitTxnOffsets(s, "g", 5, 0, txnOffsets(6, 7)), "a second commit of the transaction")
				require.Equal(t, [2]int64{1, -1}, committedPair(s, "g"), "pending")
				want := [2]int64{1, -1}
				switch end {
				case "commit":
					require.NoError(t, strata.EndTxnOffsets(s, 5, 0, true))
					want = [2]int64{6, 7}
				case "abort":
					require.NoError(t, strata.EndTxnOffsets(s, 5, 0, false))
				}
				require.Equal(t, want, committedPair(s, "g"))

				if crash {
					m = m.Crash()
					_ = s.Close()
				} else {
					require.NoError(t, s.Close())
				}
				opts.FS = m
				s, err = strata.Open("/s", opts)
				require.NoError(t, err)
				defer s.Close()
				require.Equal(t, want, committedPair(s, "g"), "after the reopen")
				// After a crash, Open aborts a transaction a crash left
				// open (the transaction coordinator knows nothing of
				// this one): its offsets go. After a clean close they
				// stay pending.
				pending := end == "open" && !crash
				require.Equal(t, pending, s.PendingTxnOffset("g", "t", 0))
				require.Equal(t, pending, s.PendingTxnOffset("g", "t", 1))

				// The producer goes on after the restart: its transaction
				// ends, and a next one commits.
				if pending {
					require.NoError(t, strata.EndTxnOffsets(s, 5, 0, true))
					require.Equal(t, [2]int64{6, 7}, committedPair(s, "g"))
				}
				require.NoError(t, strata.CommitTxnOffsets(s, "g", 5, 0, txnOffsets(8, 9)))
				require.NoError(t, strata.EndTxnOffsets(s, 5, 0, true))
				require.Equal(t, [2]int64{8, 9}, committedPair(s, "g"))
			})
		}
	}
}

// TestTxnOffsetsCrashAtEveryOperation runs transactions that commit
// offsets under SyncAlways, crashing the in-memory file system at every
// write, sync, rename or create of the workload: after the reopen, the
// offsets of every transaction whose end returned are the group's, those
// of a transaction that did not end are pending or gone, and a
// transaction's offsets are never half there.
func TestTxnOffsetsCrashAtEveryOperation(t *testing.T) {
	ops := []vfs.Op{vfs.OpWrite, vfs.OpWriteMap, vfs.OpAllocate, vfs.OpSync, vfs.OpSyncDir, vfs.OpRename, vfs.OpCreate, vfs.OpTruncate}
	opts := &strata.Options{Sync: strata.SyncAlways, RetentionCheckInterval: -1, CleanerInterval: -1, Logger: logOnFailure(t)}
	setup := func() *vfs.Mem {
		m := vfs.NewMem()
		s, err := strata.Open("data", onFS(m, opts))
		require.NoError(t, err)
		require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2}))
		for i := range 40 {
			_, err := s.AppendTo(ctx, "t", i%2, rec("k", fmt.Sprint(i)))
			require.NoError(t, err)
		}
		require.NoError(t, s.Close())
		return m
	}
	// Transaction i commits offsets (i, i) and ends: even ones commit, odd
	// ones abort. It returns the last transaction that ended and whether
	// the next one had committed its offsets.
	workload := func(s *strata.Store) (ended int64, pending bool) {
		for i := int64(1); i <= 8; i++ {
			if strata.CommitTxnOffsets(s, "g", 3, 0, txnOffsets(i, i)) != nil {
				return ended, false
			}
			if strata.EndTxnOffsets(s, 3, 0, i%2 == 0) != nil {
				return ended, true
			}
			ended = i
		}
		return ended, false
	}
	// committedAfter is what the group holds once transactions up to i
	// ended.
	committedAfter := func(i int64) [2]int64 {
		if i -= i % 2; i == 0 {
			return [2]int64{-1, -1}
		}
		return [2]int64{i, i}
	}

	m := setup().Crash()
	s, err := strata.Open("data", onFS(m, opts))
	require.NoError(t, err)
	count := func() (n int) {
		for _, op := range ops {
			n += m.Count(op)
		}
		return n
	}
	before := count()
	ended, _ := workload(s)
	require.Equal(t, int64(8), ended)
	total := count() - before
	require.NoError(t, s.Close())

	for k := 0; k <= total; k++ {
		m := setup().Crash()
		s, err := strata.Open("data", onFS(m, opts))
		require.NoError(t, err)
		m.SetInjector(vfs.FailAfter(k, ops...))
		ended, pending := workload(s)
		after := m.Crash()
		_ = s.Close()
		s2, err := strata.Open("data", onFS(after, opts))
		require.NoError(t, err, "k=%d", k)
		got := committedPair(s2, "g")
		// The transaction after the last that ended may have ended too
		// (its marker was written, then a later write failed).
		ok := got == committedAfter(ended) || (pending && got == committedAfter(ended+1))
		require.True(t, ok, "k=%d: committed %v after transaction %d ended (next pending: %v)", k, got, ended, pending)
		if s2.PendingTxnOffset("g", "t", 0) != s2.PendingTxnOffset("g", "t", 1) {
			t.Fatalf("k=%d: a transaction's offsets half pending", k)
		}
		require.NoError(t, s2.Close())
	}
}
