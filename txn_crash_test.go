package strata_test

import (
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// txnCrashParts are the partitions each transaction of the crash test
// writes to.
var txnCrashParts = []strata.TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}}

const (
	txnCrashSteps    = 8
	txnCrashInterval = 10 * time.Millisecond // SyncEvery's interval
)

// txnAttempt is what the workload did with one transaction: its values
// (each partition gets its own) and how it ended: "committed" (Commit
// returned nil), "aborted" (Abort returned nil), or "uncertain" (an
// error: committed or not, but whole either way).
type txnAttempt struct {
	values []string
	state  string
	offset int64 // the input's offset it commits for txnCrashGroup, 0 for none
}

// The input topic whose offsets the crash test's transactions commit, and
// the group that commits them.
var (
	txnCrashInput = strata.TopicPartition{Topic: "in", Partition: 0}
	txnCrashGroup = "relay"
)

// txnCrashWorkload runs transactions over txnCrashParts (some over one of
// them, committed in one phase, others over two or three), one id, every
// third aborted, until a call fails. Under SyncEvery the fake clock passes
// the sync interval between some of them, so that the background fsyncs
// fall at the same points on every run.
func txnCrashWorkload(t *testing.T, s *strata.Store, everySync bool) []txnAttempt {
	var out []txnAttempt
	for i := range txnCrashSteps {
		if everySync && i%3 == 1 {
			time.Sleep(txnCrashInterval + time.Millisecond)
		}
		a := txnAttempt{state: "uncertain"}
		tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "relay"})
		if err != nil {
			return out
		}
		for j, tp := range txnCrashParts {
			switch {
			case i%4 == 0 && j != (i/4)%3:
				continue // a transaction of one partition
			case i%4 != 0 && (i+j)%4 == 3:
				continue // not every transaction writes to every partition
			}
			var recs []strata.Record
			for k := range 1 + (i+j)%3 {
				v := fmt.Sprintf("t%d.%s%d.%d", i, tp.Topic, tp.Partition, k)
				a.values = append(a.values, v)
				recs = append(recs, strata.Record{Value: []byte(v)})
			}
			require.NoError(t, tx.AppendTo(ctx, tp.Topic, tp.Partition, recs...))
		}
		if i%4 != 0 {
			// The offsets of the input this transaction consumed, with it.
			a.offset = int64(i + 1)
			require.NoError(t, tx.CommitOffsets(ctx, txnCrashGroup, map[strata.TopicPartition]int64{txnCrashInput: a.offset}))
		}
		if i%3 == 2 {
			if err := tx.Abort(ctx); err == nil {
				a.state = "aborted"
			}
		} else if err := tx.Commit(ctx); err == nil {
			a.state = "committed"
		}
		out = append(out, a)
		if a.state == "uncertain" {
			return out
		}
	}
	return out
}

// TestTxnSurviveCrashAtEveryOperation runs transactions across three
// partitions of two topics, most of them committing a group's offsets
// too, on the in-memory file system, under SyncAlways
// and SyncEvery, and crashes it at each write, sync, rename and the rest
// in turn, keeping what was synced, a torn prefix of the rest, or random
// pages of it. After reopening, under ReadCommitted (a partition reader,
// and the store's Scan) every transaction is
// visible whole or not at all, in every partition; every one whose Commit
// returned is visible, and no aborted one is; the group's committed offset
// is the one the last visible transaction committed (none if none is); no
// transaction is left open (the last stable offset is the end); and a new
// transaction of the same id commits.
func TestTxnSurviveCrashAtEveryOperation(t *testing.T) {
	runTxnCrashTest(t, txnCrashWorkload, func(t *testing.T, s *strata.Store, at string) {
		tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "relay"})
		require.NoError(t, err, at)
		require.NoError(t, tx.AppendTo(ctx, "b", 0, strata.Record{Value: []byte("after")}), at)
		require.NoError(t, tx.Commit(ctx), at)
	})
}

// runTxnCrashTest runs the crash test of transactions under SyncAlways
// and SyncEvery: workload makes the transactions, until a call fails, on
// a store the test crashes at each operation in turn; next, on the store
// reopened after each crash and checked, commits a transaction of the id
// "relay" writing "after" to b-0.
func runTxnCrashTest(t *testing.T, workload func(t *testing.T, s *strata.Store, everySync bool) []txnAttempt, next func(t *testing.T, s *strata.Store, at string)) {
	for _, tc := range []struct {
		name   string
		policy strata.SyncPolicy
	}{
		{"SyncAlways", strata.SyncAlways},
		{"SyncEvery", strata.SyncEvery(txnCrashInterval)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.policy != strata.SyncEvery(txnCrashInterval) {
				txnCrashTest(t, tc.policy, false, workload, next)
				return
			}
			// In a bubble, so that the background fsyncs come between
			// the same transactions on every run.
			synctest.Test(t, func(t *testing.T) {
				txnCrashTest(t, tc.policy, true, workload, next)
			})
		})
	}
}

func txnCrashTest(t *testing.T, policy strata.SyncPolicy, everySync bool, workload func(t *testing.T, s *strata.Store, everySync bool) []txnAttempt, next func(t *testing.T, s *strata.Store, at string)) {
	opts := &strata.Options{Sync: policy, RetentionCheckInterval: -1, CleanerInterval: -1, Logger: slog.New(slog.DiscardHandler)}
	setup := func() *vfs.Mem {
		m := vfs.NewMem()
		s := openCond(t, m, opts)
		require.NoError(t, s.CreateTopic("a", strata.TopicConfig{Partitions: 2, SegmentBytes: 1024}))
		require.NoError(t, s.CreateTopic("b", strata.TopicConfig{Partitions: 1, SegmentBytes: 1024}))
		require.NoError(t, s.CreateTopic(txnCrashInput.Topic, strata.TopicConfig{}))
		_, err := s.AppendTo(ctx, txnCrashInput.Topic, 0, vals("in", txnCrashSteps)...)
		require.NoError(t, err)
		require.NoError(t, s.Close())
		return m.Crash()
	}

	m := setup()
	s := openCond(t, m, opts)
	before := condOpCount(m)
	attempts := workload(t, s, everySync)
	require.Len(t, attempts, txnCrashSteps)
	for _, a := range attempts {
		require.NotEqual(t, "uncertain", a.state)
	}
	total := condOpCount(m) - before
	require.NoError(t, s.Close())
	t.Logf("%d operations to fail at", total)

	crashPoints(t, total, 5, func(k, torn int) {
		at := fmt.Sprintf("k=%d torn=%d", k, torn)
		m := setup()
		s := openCond(t, m, opts)
		m.SetInjector(vfs.FailAfter(k, condCrashOps...))
		attempts := workload(t, s, everySync)
		after := crashedWay(m, k, torn)
		_ = s.Close()
		s2 := openCond(t, after, opts, at)
		checkTxnsRecovered(t, s2, attempts, at)
		next(t, s2, at)
		v := viewTxns(t, s2, "b", 0)
		require.Equal(t, "after", v.committed[len(v.committed)-1], at)
		require.NoError(t, s2.Close())
	})
}

// checkTxnsRecovered checks the partitions of a reopened store against
// the transactions of the crashed run.
func checkTxnsRecovered(t *testing.T, s *strata.Store, attempts []txnAttempt, at string) {
	visible := map[string]bool{}
	for _, tp := range txnCrashParts {
		v := viewTxns(t, s, tp.Topic, tp.Partition)
		require.Empty(t, v.open, "%s %v: a transaction left open", at, tp)
		want := slices.Sorted(slices.Values(v.committed))
		require.Equal(t, want, readCommitted(t, s, tp.Topic, tp.Partition), "%s %v: what a ReadCommitted reader reads", at, tp)
		var scanned []string
		for r, err := range s.View(strata.ReadCommitted).Scan(tp.Topic, tp.Partition, 0) {
			require.NoError(t, err, "%s %v", at, tp)
			scanned = append(scanned, string(r.Value))
		}
		require.Equal(t, want, slices.Sorted(slices.Values(scanned)), "%s %v: what the store's ReadCommitted Scan reads", at, tp)
		for _, val := range v.committed {
			require.False(t, visible[val], "%s: %s twice", at, val)
			visible[val] = true
		}
		p, err := strata.PartitionOf(s, tp.Topic, tp.Partition)
		require.NoError(t, err)
		require.Equal(t, p.EndOffset(), p.LastStableOffset(), "%s %v", at, tp)
	}
	var offset int64 // the committed offset the visible transactions say
	for i, a := range attempts {
		n := 0
		for _, val := range a.values {
			if visible[val] {
				n++
			}
		}
		switch {
		case a.state == "committed":
			require.Equal(t, len(a.values), n, "%s: committed transaction %d not whole: %d of %d", at, i, n, len(a.values))
		case a.state == "aborted":
			require.Zero(t, n, "%s: aborted transaction %d visible", at, i)
		default:
			require.True(t, n == 0 || n == len(a.values), "%s: transaction %d (%s) partly visible: %d of %d", at, i, a.state, n, len(a.values))
		}
		if n > 0 && a.offset > 0 {
			offset = a.offset
		}
	}
	om, ok := s.Committed(txnCrashGroup, txnCrashInput.Topic, txnCrashInput.Partition)
	if offset == 0 {
		require.False(t, ok, "%s: an offset committed without its transaction: %+v", at, om)
	} else {
		require.True(t, ok, "%s: the offset of a visible transaction is not committed", at)
		require.Equal(t, offset, om.Offset, "%s: the committed offset is the last visible transaction's", at)
	}
}
