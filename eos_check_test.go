package strata_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/partition"
)

// eosState is what the partitions of a reopened store hold, as the
// exactly-once checks read them.
type eosState map[strata.TopicPartition][]eosRecord

// checkEOSRecovered checks the partitions of a store reopened after the
// exactly-once workload's ops against them: no transaction is left open
// and a ReadCommitted reader reads exactly the records outside
// transactions and those of committed ones; every record is an op's, and
// none is there twice; a conditional append or a produce is there whole at
// the offset it returned (durable: if it was acknowledged; else if it is
// there at all), or not at all, and nothing refused is there; a committed
// transaction is visible whole, an aborted one not at all, an uncertain
// one whole or not at all; eosGroup's committed offset is the one the last
// visible transaction committed. It returns what the partitions hold.
func checkEOSRecovered(t *testing.T, s *strata.Store, ops []*eosOp, durable bool, at string) eosState {
	t.Helper()
	type ref struct {
		op *eosOp
		j  int
	}
	byValue := map[string]ref{}
	for _, op := range ops {
		for j, v := range op.Values {
			byValue[v] = ref{op, j}
		}
	}
	st := eosState{}
	visible := map[*eosOp]int{}
	seen := map[string]bool{}
	for _, tp := range txnCrashParts {
		recs := eosRead(t, s, tp)
		st[tp] = recs
		var want []string
		for _, r := range recs {
			require.NotEqual(t, "open", r.state, "%s %v offset %d: a transaction left open", at, tp, r.offset)
			require.False(t, seen[r.value], "%s %v offset %d: %q twice", at, tp, r.offset, r.value)
			seen[r.value] = true
			x, ok := byValue[r.value]
			require.True(t, ok, "%s %v offset %d: %q is no op's", at, tp, r.offset, r.value)
			op := x.op
			if op.Kind == "txn" {
				require.NotEqual(t, "plain", r.state, "%s %v offset %d: %q outside its transaction", at, tp, r.offset, r.value)
			} else {
				require.Equal(t, "plain", r.state, "%s %v offset %d: %q", at, tp, r.offset, r.value)
				require.NotEqual(t, "refused", op.State, "%s %v offset %d: refused %q is there", at, tp, r.offset, r.value)
				require.Equal(t, op.Key, r.key, "%s %v offset %d", at, tp, r.offset)
				if op.Offset >= 0 {
					require.Equal(t, op.TP, tp, "%s: %q", at, r.value)
					require.Equal(t, op.Offset+int64(x.j), r.offset, "%s %v: %q at the offset its call returned", at, tp, r.value)
				}
			}
			if r.visible() {
				visible[op]++
				want = append(want, r.value)
			}
		}
		slices.Sort(want)
		require.Equal(t, want, readCommitted(t, s, tp.Topic, tp.Partition), "%s %v: what a ReadCommitted reader reads", at, tp)
		p, err := strata.PartitionOf(s, tp.Topic, tp.Partition)
		require.NoError(t, err)
		require.Equal(t, p.EndOffset(), p.LastStableOffset(), "%s %v: the last stable offset", at, tp)
	}
	var input int64 // the offset the last visible transaction committed
	for i, op := range ops {
		n, all := visible[op], len(op.Values)
		if op.Kind == "txn" && n > 0 && op.Input > 0 {
			input = op.Input
		}
		what := fmt.Sprintf("%s: op %d (%s, %s) has %d of %d records visible", at, i, op.Kind, op.State, n, all)
		switch {
		case op.State == "refused" || op.State == "aborted":
			require.Zero(t, n, what)
		case op.State == "acked" && (durable || op.Kind == "txn"):
			require.Equal(t, all, n, what)
		default:
			require.True(t, n == 0 || n == all, what)
		}
	}
	om, ok := s.Committed(eosGroup, eosInput.Topic, eosInput.Partition)
	if input == 0 {
		require.False(t, ok, "%s: an offset committed with no visible transaction: %+v", at, om)
	} else {
		require.True(t, ok, "%s: the offset of a visible transaction is not committed", at)
		require.Equal(t, input, om.Offset, "%s: the committed offset is the last visible transaction's", at)
	}
	return st
}

// checkEOSAfterRestart checks that the reopened store goes on where the
// partitions (st) say: a retry of each acknowledged produce batch among
// its producer's last 5 in the partition is answered with its offset and
// writes nothing, and one that a crash lost (not durable) is appended or
// refused as out of order, never written twice; AppendIfLast and
// AppendIfEnd accept the last and end offsets the partitions hold and
// refuse others with those as Actual; a new transaction of the id commits,
// and a new Producer produces. It returns how many retries were answered
// as duplicates.
func checkEOSAfterRestart(t *testing.T, s *strata.Store, ops []*eosOp, st eosState, at string) (retried int) {
	t.Helper()
	// Each producer's last 5 batches in each partition, by first offset.
	type prodTP struct {
		tp  strata.TopicPartition
		pid int64
	}
	lastBatches := map[prodTP][]int64{}
	present := map[int64]map[strata.TopicPartition]bool{} // batch base → partitions
	for tp, recs := range st {
		for _, r := range recs {
			if r.h.ProducerID < 0 || r.h.IsTransactional() || r.offset != r.h.BaseOffset {
				continue
			}
			k := prodTP{tp, r.h.ProducerID}
			lastBatches[k] = append(lastBatches[k], r.offset)
			if present[r.offset] == nil {
				present[r.offset] = map[strata.TopicPartition]bool{}
			}
			present[r.offset][tp] = true
		}
	}
	for k, bases := range lastBatches {
		lastBatches[k] = bases[max(0, len(bases)-5):]
	}
	for _, op := range ops {
		if op.Kind != "produce" || op.State != "acked" || !present[op.Offset][op.TP] {
			continue
		}
		h, _, err := batchAt(s, op.TP, op.Offset)
		require.NoError(t, err, at)
		if !slices.Contains(lastBatches[prodTP{op.TP, h.ProducerID}], op.Offset) {
			continue
		}
		base, dup, err := appendRaw(s, op.TP, op.Batch)
		require.NoError(t, err, "%s: a retry of the batch at %v %d", at, op.TP, op.Offset)
		require.True(t, dup, "%s: a retry of the batch at %v %d is a duplicate", at, op.TP, op.Offset)
		require.Equal(t, op.Offset, base, "%s: a retry of the batch at %v %d", at, op.TP, op.Offset)
		retried++
	}
	for _, op := range ops {
		if op.Kind != "produce" || op.State != "acked" || present[op.Offset][op.TP] {
			continue
		}
		_, dup, err := appendRaw(s, op.TP, op.Batch)
		if err != nil {
			require.ErrorIs(t, err, partition.ErrOutOfOrderSequence, "%s: a retry of the lost batch at %v %d", at, op.TP, op.Offset)
		} else {
			require.False(t, dup, "%s: the lost batch at %v %d is not there", at, op.TP, op.Offset)
		}
	}
	seen := map[string]bool{}
	for _, tp := range txnCrashParts {
		recs := eosRead(t, s, tp)
		for _, r := range recs {
			require.False(t, seen[r.value], "%s %v offset %d: %q twice after the retries", at, tp, r.offset, r.value)
			seen[r.value] = true
		}
		st[tp] = recs
	}

	requireWrong := func(err error, actual int64, what string) {
		t.Helper()
		var wrong *strata.WrongOffsetError
		require.ErrorAs(t, err, &wrong, "%s: %s", at, what)
		require.Equal(t, actual, wrong.Actual, "%s: %s", at, what)
	}
	for _, key := range eosCondKeys {
		for _, topicName := range []string{"a", "b"} {
			part, err := s.PartitionFor(topicName, []byte(key))
			require.NoError(t, err)
			last := strata.NoOffset
			for _, r := range st[strata.TopicPartition{Topic: topicName, Partition: part}] {
				if r.key == key {
					last = r.offset
				}
			}
			r := strata.Record{Key: []byte(key), Value: []byte("after")}
			_, err = s.AppendIfLast(ctx, topicName, []byte(key), last+1, r)
			requireWrong(err, last, fmt.Sprintf("key %s of %s at %d", key, topicName, last+1))
			_, err = s.AppendIfLast(ctx, topicName, []byte(key), last, r)
			require.NoError(t, err, "%s: key %s of %s at its last offset %d", at, key, topicName, last)
		}
	}
	for _, tp := range txnCrashParts {
		end, err := s.ListOffsets(tp.Topic, tp.Partition, strata.Latest)
		require.NoError(t, err)
		_, err = s.AppendIfEnd(ctx, tp.Topic, tp.Partition, end+1, rec("x", "after"))
		requireWrong(err, end, fmt.Sprintf("%v past its end %d", tp, end))
		off, err := s.AppendIfEnd(ctx, tp.Topic, tp.Partition, end, rec("x", "after"))
		require.NoError(t, err, "%s: %v at its end %d", at, tp, end)
		require.Equal(t, end, off, at)
	}

	tx, err := s.BeginTxn(ctx, strata.TxnOptions{ID: eosTxnID})
	require.NoError(t, err, at)
	for _, tp := range txnCrashParts {
		require.NoError(t, tx.AppendTo(ctx, tp.Topic, tp.Partition, strata.Record{Value: []byte("txn after")}), at)
	}
	require.NoError(t, tx.CommitOffsets(ctx, eosGroup, map[strata.TopicPartition]int64{eosInput: int64(eosInputRecords)}), at)
	require.NoError(t, tx.Commit(ctx), at)
	om, ok := s.Committed(eosGroup, eosInput.Topic, eosInput.Partition)
	require.True(t, ok, at)
	require.Equal(t, int64(eosInputRecords), om.Offset, at)
	for _, tp := range txnCrashParts {
		require.Contains(t, readCommitted(t, s, tp.Topic, tp.Partition), "txn after", "%s %v", at, tp)
	}
	p := s.Producer(strata.ProducerOptions{})
	_, err = p.ProduceSync(ctx, "a", rec("p0", "produce after"))
	require.NoError(t, err, at)
	require.NoError(t, p.Close())
	return retried
}
