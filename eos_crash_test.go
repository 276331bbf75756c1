package strata_test

import (
	"fmt"
	"log/slog"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/vfs"
)

// eosCrashSteps is how many steps the exactly-once crash test's workload
// runs (each a conditional append, a produce and its retry, and a
// transaction).
const eosCrashSteps = 12

// TestExactlyOnceSurviveCrashAtEveryOperation runs the exactly-once
// workload (conditional appends, an idempotent Producer's batches and
// their retries, and transactions with a group's offsets, mixed in three
// partitions of two topics that roll) on the in-memory file system under SyncAlways and
// SyncEvery, in a synctest bubble, and crashes it at each write, sync,
// rename and the rest in turn, keeping what was synced, a torn prefix of
// the rest, or random pages of it. After reopening: no transaction is
// open, ReadCommitted readers read the records outside transactions and
// those of committed ones; every acknowledged append is there once (under
// SyncAlways; under SyncEvery, if there, at its offset), every committed
// transaction whole, every aborted one invisible, every other call whole
// or not at all, nothing refused and nothing twice; the group's committed
// offset is the last visible transaction's. Then the producer
// state dedups a retry of each acknowledged batch among its producer's
// last 5 in the partition (all of them under SyncAlways, the ones the
// crash kept under SyncEvery), and a retry of one it lost writes it at
// most once; the conditional appends check against the recovered offsets;
// and new transactions and produces go on.
func TestExactlyOnceSurviveCrashAtEveryOperation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy strata.SyncPolicy
	}{
		{"SyncAlways", strata.SyncAlways},
		{"SyncEvery", strata.SyncEvery(txnCrashInterval)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eosCrashTest(t, tc.policy)
		})
	}
}

func eosCrashTest(t *testing.T, policy strata.SyncPolicy) {
	opts := &strata.Options{Sync: policy, RetentionCheckInterval: -1, CleanerInterval: -1, Logger: slog.New(slog.DiscardHandler)}
	everySync := policy != strata.SyncAlways
	setup := func(t *testing.T) *vfs.Mem {
		m := vfs.NewMem()
		s := openCond(t, m, opts)
		require.NoError(t, s.CreateTopic("a", strata.TopicConfig{Partitions: 2, SegmentBytes: 512}))
		require.NoError(t, s.CreateTopic("b", strata.TopicConfig{Partitions: 1, SegmentBytes: 512}))
		require.NoError(t, s.CreateTopic(eosInput.Topic, strata.TopicConfig{}))
		_, err := s.AppendTo(ctx, eosInput.Topic, eosInput.Partition, vals("in", eosInputRecords)...)
		require.NoError(t, err)
		require.NoError(t, s.Close())
		return m.Crash()
	}
	run := func(t *testing.T, s *strata.Store) []*eosOp {
		var ops []*eosOp
		w := &eosWorkload{errorf: t.Errorf, s: s, strict: true, everySync: everySync, begin: func(op *eosOp) { ops = append(ops, op) }}
		w.run(eosCrashSteps)
		return ops
	}

	// A run without faults: every call does what it should, and the
	// partitions roll (so that producer state is snapshotted).
	var total int
	synctest.Test(t, func(t *testing.T) {
		m := setup(t)
		s := openCond(t, m, opts)
		before := condOpCount(m)
		ops := run(t, s)
		require.Len(t, ops, 3*eosCrashSteps)
		for i, op := range ops {
			require.NotEqual(t, "uncertain", op.State, "op %d (%s)", i, op.Kind)
		}
		total = condOpCount(m) - before
		for _, tp := range txnCrashParts {
			p, err := strata.PartitionOf(s, tp.Topic, tp.Partition)
			require.NoError(t, err)
			require.Greater(t, len(p.Segments()), 2, "%v rolls", tp)
		}
		require.NoError(t, s.Close())
	})
	t.Logf("%d operations to fail at", total)

	retried := 0
	crashPoints(t, total, 5, func(k, torn int) {
		at := fmt.Sprintf("k=%d torn=%d", k, torn)
		synctest.Test(t, func(t *testing.T) {
			m := setup(t)
			s := openCond(t, m, opts)
			m.SetInjector(vfs.FailAfter(k, condCrashOps...))
			ops := run(t, s)
			after := crashedWay(m, k, torn)
			_ = s.Close()
			s2 := openCond(t, after, opts, at)
			st := checkEOSRecovered(t, s2, ops, policy == strata.SyncAlways, at)
			retried += checkEOSAfterRestart(t, s2, ops, st, at)
			require.NoError(t, s2.Close())
		})
	})
	require.Positive(t, retried, "retries across a restart were answered as duplicates")
}
