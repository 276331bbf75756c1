package strata_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// txnProducerCrashWorkload is txnCrashWorkload's transactions made by one
// TxnProducer, as a Kafka client makes them: the batches encoded by the
// caller, every transaction at the epoch InitTxnProducer gave (each but
// the first at an epoch follows a commit or an abort at it), the producer
// started again from its epoch half way, until a call fails.
func txnProducerCrashWorkload(t *testing.T, s *strata.Store, everySync bool) []txnAttempt {
	var out []txnAttempt
	p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay"})
	if err != nil {
		return out
	}
	seqs := map[strata.TopicPartition]int32{}
	for i := range txnCrashSteps {
		if everySync && i%3 == 1 {
			time.Sleep(txnCrashInterval + time.Millisecond)
		}
		if i == txnCrashSteps/2 {
			// A restart of the producer (KIP-360): its epoch bumped,
			// the id's Empty record in place of the last decision.
			if p, err = s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay", Current: &p}); err != nil {
				return out
			}
			clear(seqs)
		}
		a := txnAttempt{state: "uncertain"}
		batches := map[strata.TopicPartition][]string{}
		var parts []strata.TopicPartition
		for j, tp := range txnCrashParts {
			switch {
			case i%4 == 0 && j != (i/4)%3:
				continue
			case i%4 != 0 && (i+j)%4 == 3:
				continue
			}
			parts = append(parts, tp)
			for k := range 1 + (i+j)%3 {
				v := fmt.Sprintf("t%d.%s%d.%d", i, tp.Topic, tp.Partition, k)
				a.values = append(a.values, v)
				batches[tp] = append(batches[tp], v)
			}
		}
		out = append(out, a)
		if err := s.AddTxnPartitions(ctx, p, parts...); err != nil {
			return out
		}
		for _, tp := range parts {
			if _, _, err := s.AppendTxnBatch(ctx, p, tp.Topic, tp.Partition, txnBatch(p, seqs[tp], batches[tp]...)); err != nil {
				return out
			}
			seqs[tp] += int32(len(batches[tp]))
		}
		if i%4 != 0 {
			out[i].offset = int64(i + 1)
			err := s.CommitTxnOffsets(ctx, p, txnCrashGroup, map[strata.TopicPartition]strata.OffsetAndMetadata{txnCrashInput: {Offset: out[i].offset}})
			if err != nil {
				return out
			}
		}
		commit := i%3 != 2
		if err := s.EndTxn(ctx, p, commit); err != nil {
			return out
		}
		out[i].state = "committed"
		if !commit {
			out[i].state = "aborted"
		}
	}
	return out
}

// TestTxnProducerSurviveCrashAtEveryOperation is
// TestTxnSurviveCrashAtEveryOperation for a TxnProducer's transactions,
// which share one epoch: after a crash at each operation, with what was
// synced, a torn prefix of the rest, or random pages of it, every
// transaction is visible whole or not at all, every one whose EndTxn
// committed it is, no aborted one is, the group's offset is the last
// visible one's, nothing is left open; and the id's next producer
// commits.
func TestTxnProducerSurviveCrashAtEveryOperation(t *testing.T) {
	runTxnCrashTest(t, txnProducerCrashWorkload, func(t *testing.T, s *strata.Store, at string) {
		p, err := s.InitTxnProducer(ctx, strata.TxnProducerOptions{ID: "relay"})
		require.NoError(t, err, at)
		require.NoError(t, s.AddTxnPartitions(ctx, p, strata.TopicPartition{Topic: "b"}), at)
		_, _, err = s.AppendTxnBatch(ctx, p, "b", 0, txnBatch(p, 0, "after"))
		require.NoError(t, err, at)
		require.NoError(t, s.EndTxn(ctx, p, true), at)
	})
}
