package partition

import (
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/internal/kafkadir"
	"github.com/stratalog/strata/log"
)

// recs returns n records of ids from, from+1, ….
func recs(from, n int) []log.Record {
	out := make([]log.Record, n)
	for i := range out {
		out[i] = rec(from + i)
	}
	return out
}

// produce appends n records as one batch of producer pid at epoch from
// sequence s.
func produce(t testing.TB, p *Partition, pid int64, epoch int16, s int32, n int) (int64, bool, error) {
	t.Helper()
	return p.AppendProduced(recs(int(s), n), ProducerBatch{ID: pid, Epoch: epoch, Seq: s}, log.None, 0)
}

// TestProducerDuplicates: a retry of each of the producer's last 5 batches
// returns the original offset and writes nothing; a retry of the sixth
// oldest is out of order, as Kafka answers it.
func TestProducerDuplicates(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	var bases []int64
	for i := range 6 {
		base, dup, err := produce(t, p, 7, 0, int32(3*i), 3)
		require.NoError(t, err)
		require.False(t, dup)
		bases = append(bases, base)
	}
	end := p.EndOffset()
	require.Equal(t, int64(18), end)
	for i := 1; i < 6; i++ {
		base, dup, err := produce(t, p, 7, 0, int32(3*i), 3)
		require.NoError(t, err, "batch %d", i)
		require.True(t, dup, "batch %d", i)
		require.Equal(t, bases[i], base, "batch %d", i)
	}
	require.Equal(t, end, p.EndOffset(), "a duplicate writes nothing")

	_, _, err := produce(t, p, 7, 0, 0, 3)
	require.ErrorIs(t, err, ErrOutOfOrderSequence, "the sixth oldest batch is forgotten")
	// A retry with the same first sequence but another length is no
	// duplicate either.
	_, _, err = produce(t, p, 7, 0, 15, 2)
	require.ErrorIs(t, err, ErrOutOfOrderSequence)
	require.Equal(t, end, p.EndOffset())
	requireIDs(t, readRange(t, p, 0), 0, seq(0, 18))
}

// TestProducerSequenceChecks: a gap, a stale epoch, a new epoch not at 0
// are refused and write nothing; a new epoch at 0 and an unknown producer
// at any sequence are taken.
func TestProducerSequenceChecks(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	_, _, err := produce(t, p, 1, 2, 40, 2) // unknown producer: any sequence
	require.NoError(t, err)

	for _, tc := range []struct {
		name  string
		epoch int16
		seq   int32
		want  error
	}{
		{"gap", 2, 43, ErrOutOfOrderSequence},
		{"behind", 2, 41, ErrOutOfOrderSequence},
		{"stale epoch", 1, 42, ErrProducerFenced},
		{"stale epoch at 0", 1, 0, ErrProducerFenced},
		{"new epoch not at 0", 3, 42, ErrOutOfOrderSequence},
		{"new epoch at 1", 3, 1, ErrOutOfOrderSequence},
	} {
		t.Run(tc.name, func(t *testing.T) {
			end := p.EndOffset()
			_, _, err := produce(t, p, 1, tc.epoch, tc.seq, 1)
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, end, p.EndOffset(), "nothing written")
		})
	}
	base, dup, err := produce(t, p, 1, 2, 42, 1)
	require.NoError(t, err)
	require.False(t, dup)
	require.Equal(t, int64(2), base)
	_, _, err = produce(t, p, 1, 3, 0, 1) // a new epoch at 0
	require.NoError(t, err)
	_, _, err = produce(t, p, 1, 2, 43, 1)
	require.ErrorIs(t, err, ErrProducerFenced, "the new epoch fences the old")
	// A retry of the old epoch's batch: its epoch is no longer current.
	_, _, err = produce(t, p, 1, 2, 42, 1)
	require.ErrorIs(t, err, ErrProducerFenced)
	info := p.Producers()
	require.Len(t, info, 1)
	require.Equal(t, ProducerInfo{ID: 1, Epoch: 3, LastSequence: 0, LastOffset: 3, LastTimestamp: info[0].LastTimestamp, CoordinatorEpoch: -1, TxnFirstOffset: -1}, info[0])
	one, ok := p.Producer(1)
	require.True(t, ok)
	require.Equal(t, info[0], one, "Producer describes one producer as Producers does")
	_, ok = p.Producer(2)
	require.False(t, ok, "a producer the partition does not know")
}

// TestProducerSequenceWraps: sequences wrap from MaxInt32 to 0, within a
// batch and between batches.
func TestProducerSequenceWraps(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	_, _, err := produce(t, p, 1, 0, math.MaxInt32-1, 3) // MaxInt32-1, MaxInt32, 0
	require.NoError(t, err)
	_, dup, err := produce(t, p, 1, 0, math.MaxInt32-1, 3)
	require.NoError(t, err)
	require.True(t, dup)
	_, _, err = produce(t, p, 1, 0, 2, 1)
	require.ErrorIs(t, err, ErrOutOfOrderSequence)
	_, _, err = produce(t, p, 1, 0, 1, 1)
	require.NoError(t, err)

	_, _, err = produce(t, p, 2, 0, math.MaxInt32, 1)
	require.NoError(t, err)
	_, _, err = produce(t, p, 2, 0, 0, 1)
	require.NoError(t, err, "0 follows MaxInt32")
}

// TestProducerInvalidFields: negative fields are refused, whatever the
// state.
func TestProducerInvalidFields(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	for _, pb := range []ProducerBatch{{ID: -1}, {ID: 1, Epoch: -1}, {ID: 1, Seq: -1}} {
		_, _, err := p.AppendProduced(recs(0, 1), pb, log.None, 0)
		require.ErrorIs(t, err, ErrInvalidProducer, "%+v", pb)
	}
	_, err := p.WriteMarker(-1, 0, true, 0)
	require.ErrorIs(t, err, ErrInvalidProducer)
	_, err = p.WriteMarker(1, -1, true, 0)
	require.ErrorIs(t, err, ErrInvalidProducer)
	raw := func(pid int64, epoch int16, s int32) []byte {
		b, err := log.EncodeBatch(nil, recs(0, 1), log.BatchOptions{Idempotent: true, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: s})
		require.NoError(t, err)
		return b
	}
	for _, b := range [][]byte{raw(-2, 0, 0), raw(1, -1, 0), raw(1, 0, -1)} {
		_, err := p.AppendRawBatch(b)
		require.ErrorIs(t, err, ErrInvalidProducer)
	}
	require.Equal(t, int64(0), p.EndOffset())
	require.Empty(t, p.Producers())
}

// TestRawBatchProducerChecks: AppendRawBatch checks a batch with a
// producer id as AppendProduced does, and answers a retry with the
// original offset.
func TestRawBatchProducerChecks(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	raw := func(s int32, n int) []byte {
		b, err := log.EncodeBatch(nil, recs(int(s), n), log.BatchOptions{Idempotent: true, ProducerID: 9, ProducerEpoch: 1, BaseSequence: s})
		require.NoError(t, err)
		return b
	}
	_, err := p.Append(recs(100, 2))
	require.NoError(t, err)
	base, err := p.AppendRawBatch(raw(0, 4))
	require.NoError(t, err)
	require.Equal(t, int64(2), base)
	base, dup, err := p.AppendRawBatchProduced(raw(0, 4))
	require.NoError(t, err)
	require.True(t, dup)
	require.Equal(t, int64(2), base)
	again, err := p.AppendRawBatch(raw(0, 4))
	require.NoError(t, err)
	require.Equal(t, int64(2), again)
	_, err = p.AppendRawBatch(raw(5, 1))
	require.ErrorIs(t, err, ErrOutOfOrderSequence)
	require.Equal(t, int64(6), p.EndOffset())
	// And AppendProduced continues the raw producer's sequence.
	_, _, err = produce(t, p, 9, 1, 4, 1)
	require.NoError(t, err)
}

// TestLastStableOffset: the last stable offset stays at the first offset
// of the earliest open transaction, and moves as markers end them.
func TestLastStableOffset(t *testing.T) {
	for _, sp := range conditionalSyncPolicies {
		t.Run(sp.name, func(t *testing.T) {
			cfg := small(newClock())
			cfg.Sync = sp.sync
			p, _ := memPartition(t, cfg)
			defer p.Close()
			txn := func(pid int64, s int32, n int) int64 {
				base, _, err := p.AppendProduced(recs(int(s), n), ProducerBatch{ID: pid, Epoch: 0, Seq: s, Transactional: true}, log.None, 0)
				require.NoError(t, err)
				return base
			}
			_, err := p.Append(recs(0, 3))
			require.NoError(t, err)
			require.Equal(t, int64(3), p.LastStableOffset())
			first1 := txn(1, 0, 2)
			require.Equal(t, first1, p.LastStableOffset())
			first2 := txn(2, 0, 2)
			txn(1, 2, 2)
			_, err = p.Append(recs(10, 1))
			require.NoError(t, err)
			require.Equal(t, first1, p.LastStableOffset())

			// A producer with a transaction open writes in it only.
			_, _, err = produce(t, p, 1, 0, 4, 1)
			require.ErrorIs(t, err, ErrInvalidTxnState)

			off, err := p.WriteMarker(1, 0, true, 0)
			require.NoError(t, err)
			require.Equal(t, p.EndOffset()-1, off)
			require.Equal(t, first2, p.LastStableOffset())
			_, err = p.WriteMarker(2, 0, false, 0)
			require.NoError(t, err)
			require.Equal(t, p.HighWatermark(), p.LastStableOffset())
			require.Equal(t, p.EndOffset(), p.LastStableOffset())

			// A marker with no transaction open is written and ends
			// nothing; a stale epoch or coordinator epoch is fenced.
			off, err = p.WriteMarker(3, 0, true, 0)
			require.NoError(t, err)
			require.Equal(t, p.EndOffset()-1, off)
			end := p.EndOffset()
			_, err = p.WriteMarker(1, 0, true, -1)
			require.ErrorIs(t, err, ErrCoordinatorFenced)
			txn(1, 4, 1)
			_, _, err = p.AppendProduced(recs(0, 1), ProducerBatch{ID: 1, Epoch: 1, Seq: 0}, log.None, 0)
			require.ErrorIs(t, err, ErrInvalidTxnState, "a new epoch does not end the transaction: a marker does")
			_, err = p.WriteMarker(1, 1, false, 0)
			require.NoError(t, err)
			_, err = p.WriteMarker(1, 0, true, 0)
			require.ErrorIs(t, err, ErrProducerFenced)
			require.Equal(t, end+2, p.EndOffset())

			// Readers skip the markers.
			n := 0
			for _, r := range readRange(t, p, 0) {
				require.NotEqual(t, int64(-1), r.Offset)
				n++
			}
			require.Equal(t, 3+2+2+2+1+1, n)
		})
	}
}

// TestProducerStateAfterTruncate: a truncation rebuilds the producer state
// from what the log keeps.
func TestProducerStateAfterTruncate(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	for i := range 4 {
		_, _, err := produce(t, p, 5, 0, int32(2*i), 2)
		require.NoError(t, err)
	}
	base, _, err := p.AppendProduced(recs(0, 1), ProducerBatch{ID: 6, Seq: 0, Transactional: true}, log.None, 0)
	require.NoError(t, err)
	require.Equal(t, base, p.LastStableOffset())
	require.NoError(t, p.Truncate(6))
	require.Equal(t, p.EndOffset(), p.LastStableOffset(), "the transaction is gone")
	// Sequence 6 was cut: it is the next one again.
	base, dup, err := produce(t, p, 5, 0, 6, 2)
	require.NoError(t, err)
	require.False(t, dup)
	require.Equal(t, int64(6), base)
	_, dup, err = produce(t, p, 5, 0, 2, 2)
	require.NoError(t, err)
	require.True(t, dup, "the batches below the cut are remembered")
}

// TestConcurrentProducers: producers appending to one partition at once,
// each retrying every batch, leave each batch once, in each producer's
// order.
func TestConcurrentProducers(t *testing.T) {
	for _, sp := range conditionalSyncPolicies {
		t.Run(sp.name, func(t *testing.T) {
			cfg := small(newClock())
			cfg.Sync = sp.sync
			p, _ := memPartition(t, cfg)
			defer p.Close()
			const producers, batches = 8, 60
			var wg sync.WaitGroup
			for pid := range producers {
				wg.Go(func() {
					for i := range batches {
						pb := ProducerBatch{ID: int64(pid), Seq: int32(i)}
						r := []log.Record{{Key: []byte{byte(pid)}, Value: []byte{byte(i)}}}
						first, dup, err := p.AppendProduced(r, pb, log.None, 0)
						if err != nil || dup {
							t.Errorf("producer %d batch %d: %v, dup %v", pid, i, err, dup)
							return
						}
						again, dup, err := p.AppendProduced(r, pb, log.None, 0)
						if err != nil || !dup || again != first {
							t.Errorf("producer %d retry of batch %d: %d, %v, dup %v; want %d", pid, i, again, err, dup, first)
							return
						}
					}
				})
			}
			wg.Wait()
			next := make([]int, producers)
			all := readRange(t, p, 0)
			require.Len(t, all, producers*batches)
			for _, r := range all {
				pid := int(r.Key[0])
				require.Equal(t, next[pid], int(r.Value[0]), "producer %d", pid)
				next[pid]++
			}
		})
	}
}

// TestEncodedProducerBatch: a batch encoded beforehand for a producer is
// checked when it is appended, and its retry answered with its offset.
func TestEncodedProducerBatch(t *testing.T) {
	p, _ := memPartition(t, small(newClock()))
	defer p.Close()
	_, err := p.EncodeProduced(nil, recs(0, 1), ProducerBatch{ID: 1, Seq: -1}, log.None, 0)
	require.ErrorIs(t, err, ErrInvalidProducer)
	b, err := p.EncodeProduced(nil, recs(0, 2), ProducerBatch{ID: 1, Epoch: 4, Seq: 0, Transactional: true}, log.None, 0)
	require.NoError(t, err)
	base, dup, err := p.AppendEncodedProduced(b)
	require.NoError(t, err)
	require.False(t, dup)
	again, err := p.AppendEncoded(b)
	require.NoError(t, err)
	require.Equal(t, base, again)
	require.Equal(t, int64(2), p.EndOffset())
	require.Equal(t, base, p.LastStableOffset(), "the batch opened a transaction")
}

// TestRawKafkaTransaction: a transaction as a Kafka client and
// coordinator write it, appended raw, opens and ends as WriteMarker's.
func TestRawKafkaTransaction(t *testing.T) {
	clock := newClock()
	p, _ := memPartition(t, small(clock))
	defer p.Close()
	data := kafkadir.Batch(0, 2, kafkadir.Records(0, 3, clock.Now()), kafkadir.Opts{ProducerID: 4, ProducerEpoch: 1, Transactional: true})
	base, err := p.AppendRawBatch(data)
	require.NoError(t, err)
	require.Equal(t, int64(0), p.LastStableOffset())
	_, dup, err := p.AppendRawBatchProduced(data)
	require.NoError(t, err)
	require.True(t, dup)
	_, err = p.AppendRawBatch(kafkadir.Control(0, false, 4, 0, clock.Now()))
	require.ErrorIs(t, err, ErrProducerFenced)
	off, err := p.AppendRawBatch(kafkadir.Control(0, false, 4, 1, clock.Now()))
	require.NoError(t, err)
	require.Equal(t, base+3, off)
	require.Equal(t, int64(4), p.LastStableOffset())
	require.Equal(t, []ProducerInfo{{ID: 4, Epoch: 1, LastSequence: 2, LastOffset: 2, LastTimestamp: clock.Now().UnixMilli(),
		CoordinatorEpoch: 7, TxnFirstOffset: -1}}, p.Producers())
}
