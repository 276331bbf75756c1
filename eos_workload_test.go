package strata_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// The exactly-once workload mixes, in the same three partitions
// (txnCrashParts: a-0, a-1 and b-0), conditional appends (AppendIfEnd and
// AppendIfLast), an idempotent Producer's batches, each sent again as a
// Kafka client's retry would be, and transactions of one transactional id
// that write to one, two or three of them.

// eosOp is one call of the exactly-once workload and how it ended.
type eosOp struct {
	Kind string // "ifend", "iflast", "produce" or "txn"
	// State is "acked" (the append returned its offset, or Commit returned
	// nil), "refused" (ErrWrongOffset: nothing written), "aborted" (an
	// Abort: never visible, whatever Abort returned) or "uncertain" (the
	// call failed otherwise, or a kill cut it short: whole or not at all).
	State  string
	Values []string
	// TP, Key and Offset are where an append went and the offset of its
	// first record, once acknowledged (not for a transaction).
	TP     strata.TopicPartition
	Key    string
	Offset int64
	// Batch is an acknowledged produce's batch as the partition holds it:
	// sending it again is a retry, which must write nothing.
	Batch []byte
	// Input is the offset of eosInput a transaction commits for eosGroup
	// with its records, 0 for none.
	Input int64
}

// eosGroup commits offsets of eosInput, which holds eosInputRecords
// records, in the workload's transactions, as a consume-transform-produce
// relay does.
var (
	eosGroup        = "relay"
	eosInput        = strata.TopicPartition{Topic: "in"}
	eosInputRecords = 20
)

// eosWorkload runs step after step of the exactly-once workload on s, each
// an AppendIfEnd or AppendIfLast (some with a stale offset, which must be
// refused), a ProduceSync of one batch followed by a retry of that batch,
// and a transaction, until a call fails or steps (if positive) are done.
// prefix starts every value. With strict set (a store only this workload
// writes to, from its creation) an expected offset taken from what was
// acknowledged must be accepted; otherwise a refusal teaches the actual
// one. begin is called before each call and end after it, with the same
// op: the op's values are known at begin.
type eosWorkload struct {
	errorf     func(format string, args ...any) // a call that did what it must not
	s          *strata.Store
	prefix     string
	strict     bool
	begin, end func(*eosOp)
	// everySync lets the fake clock of a synctest bubble pass SyncEvery's
	// interval (txnCrashInterval) every third step, so that the
	// background fsyncs fall between the same calls on every run.
	everySync bool

	lasts map[string]int64 // the conditional keys' last offsets
}

// eosCondKeys are the keys of the AppendIfLast calls; no other call writes
// them.
var eosCondKeys = []string{"c0", "c1", "c2"}

// eosTxnID is the workload's transactional id.
const eosTxnID = "relay"

func (w *eosWorkload) run(steps int) {
	if w.lasts == nil {
		w.lasts = map[string]int64{}
	}
	// A Linger far past the run keeps each ProduceSync's records in one
	// batch: only ProduceSync ships them, never the linger timer between
	// two of its records on a loaded machine.
	p := w.s.Producer(strata.ProducerOptions{Linger: time.Hour, DeliveryTimeout: time.Second, RetryBackoff: 10 * time.Millisecond})
	defer p.Close()
	for i := 0; steps <= 0 || i < steps; i++ {
		if w.everySync && i%3 == 1 {
			time.Sleep(txnCrashInterval + time.Millisecond)
		}
		if !w.cond(i) || !w.produce(p, i) || !w.txn(i) {
			return
		}
	}
}

// do runs call as op, between begin and end, and says whether the
// workload goes on.
func (w *eosWorkload) do(op *eosOp, call func() bool) bool {
	if w.begin != nil {
		w.begin(op)
	}
	ok := call()
	if w.end != nil {
		w.end(op)
	}
	return ok
}

// records returns n records with key (nil for "") and values prefix.tag.j.
func (w *eosWorkload) records(op *eosOp, key, tag string, n int) []strata.Record {
	recs := make([]strata.Record, n)
	for j := range recs {
		v := fmt.Sprintf("%s%s.%d", w.prefix, tag, j)
		op.Values = append(op.Values, v)
		recs[j].Value = []byte(v)
		if key != "" {
			recs[j].Key = []byte(key)
		}
	}
	return recs
}

// cond is step i's conditional append: an AppendIfEnd at the partition's
// end (past it every fourth step) or an AppendIfLast at the key's last
// offset (the next one every fourth step).
func (w *eosWorkload) cond(i int) bool {
	tp := txnCrashParts[i%len(txnCrashParts)]
	op := &eosOp{Kind: "ifend", State: "uncertain", TP: tp, Offset: -1}
	stale := i%4 == 2 || i%4 == 3
	if i%2 == 1 {
		op.Kind, op.Key = "iflast", eosCondKeys[(i/2)%len(eosCondKeys)]
		part, err := w.s.PartitionFor(tp.Topic, []byte(op.Key))
		if err != nil {
			return false
		}
		op.TP.Partition = part
	}
	recs := w.records(op, op.Key, fmt.Sprintf("s%d.%s", i, op.Kind), 1+i%2)
	return w.do(op, func() bool {
		var (
			off, expected int64
			err           error
		)
		if op.Kind == "ifend" {
			if expected, err = w.s.ListOffsets(tp.Topic, tp.Partition, strata.Latest); err != nil {
				return false
			}
			if stale {
				expected++
			}
			off, err = w.s.AppendIfEnd(ctx, tp.Topic, tp.Partition, expected, recs...)
		} else {
			expected = w.lastOf(op.Key)
			if stale {
				expected++ // NoOffset+1 is 0: a record there, which there is not
			}
			off, err = w.s.AppendIfLast(ctx, tp.Topic, []byte(op.Key), expected, recs...)
		}
		var wrong *strata.WrongOffsetError
		switch {
		case err == nil:
			if stale {
				w.errorf("step %d: %s at a stale offset %d appended", i, op.Kind, expected)
			}
			op.State, op.Offset = "acked", off
			if op.Kind == "iflast" {
				w.lasts[op.Key] = off + int64(len(recs)) - 1
			}
			return true
		case errors.As(err, &wrong):
			if !stale && w.strict {
				w.errorf("step %d: %s at %d refused: %v", i, op.Kind, expected, err)
			}
			if op.Kind == "iflast" {
				w.lasts[op.Key] = wrong.Actual
			}
			op.State = "refused"
			return true
		}
		return false
	})
}

func (w *eosWorkload) lastOf(key string) int64 {
	if off, ok := w.lasts[key]; ok {
		return off
	}
	return strata.NoOffset
}

// produce is step i's ProduceSync of one batch (one or two records of a
// key), then the same batch sent again to its partition, which must answer
// with the batch's offset and write nothing.
func (w *eosWorkload) produce(p *strata.Producer, i int) bool {
	topicName := txnCrashParts[(i+1)%len(txnCrashParts)].Topic
	key := fmt.Sprint("p", i%4)
	op := &eosOp{Kind: "produce", State: "uncertain", TP: strata.TopicPartition{Topic: topicName}, Key: key, Offset: -1}
	recs := w.records(op, key, fmt.Sprintf("s%d.produce", i), 1+(i+1)%2)
	if !w.do(op, func() bool {
		pos, err := p.ProduceSync(ctx, topicName, recs...)
		if err != nil {
			return false
		}
		op.TP.Partition, op.Offset = pos[0].Partition, pos[0].Offset
		for j := range pos {
			if pos[j].Partition != pos[0].Partition || pos[j].Offset != pos[0].Offset+int64(j) {
				w.errorf("step %d: a produce of one key's records at %v", i, pos)
			}
		}
		h, batch, err := batchAt(w.s, op.TP, op.Offset)
		if err != nil {
			w.errorf("step %d: reading the batch back: %v", i, err)
			return false
		}
		if h.BaseOffset != op.Offset || h.ProducerID < 0 || int(h.LastOffsetDelta) != len(recs)-1 {
			w.errorf("step %d: the batch at %d: %+v", i, op.Offset, h)
		}
		op.State, op.Batch = "acked", batch
		return true
	}) {
		return false
	}
	// The retry, as a Kafka client sends it when the answer was lost.
	base, dup, err := appendRaw(w.s, op.TP, op.Batch)
	if err != nil {
		return false
	}
	if !dup || base != op.Offset {
		w.errorf("step %d: a retry of the batch at %d appended at %d (dup %v)", i, op.Offset, base, dup)
	}
	return true
}

// txn is step i's transaction, over one of the partitions (every fourth
// step, committed in one phase) or two or three of them and eosGroup's
// offset, aborted every third step.
func (w *eosWorkload) txn(i int) bool {
	op := &eosOp{Kind: "txn", State: "uncertain", Offset: -1}
	tx, err := w.s.BeginTxn(ctx, strata.TxnOptions{ID: eosTxnID})
	if err != nil {
		return false
	}
	abort := i%3 == 2
	recs := map[strata.TopicPartition][]strata.Record{}
	for j, tp := range txnCrashParts {
		switch {
		case i%4 == 0 && j != (i/4)%3:
			continue
		case i%4 != 0 && (i+j)%4 == 3:
			continue
		}
		recs[tp] = w.records(op, "", fmt.Sprintf("s%d.txn.%s%d", i, tp.Topic, tp.Partition), 1+(i+j)%3)
	}
	if i%4 != 0 {
		op.Input = 1 + int64(i%eosInputRecords)
	}
	return w.do(op, func() bool {
		for _, tp := range txnCrashParts {
			if recs[tp] != nil && tx.AppendTo(ctx, tp.Topic, tp.Partition, recs[tp]...) != nil {
				return false
			}
		}
		if op.Input > 0 {
			if tx.CommitOffsets(ctx, eosGroup, map[strata.TopicPartition]int64{eosInput: op.Input}) != nil {
				return false
			}
		}
		if abort {
			op.State = "aborted"
			return tx.Abort(ctx) == nil
		}
		if tx.Commit(ctx) != nil {
			return false
		}
		op.State = "acked"
		return true
	})
}

// appendRaw sends batch, a producer's, to tp of s: see
// partition.AppendRawBatchProduced.
func appendRaw(s *strata.Store, tp strata.TopicPartition, batch []byte) (int64, bool, error) {
	p, err := strata.PartitionOf(s, tp.Topic, tp.Partition)
	if err != nil {
		return 0, false, err
	}
	return p.AppendRawBatchProduced(batch)
}

// batchAt returns the header and a copy of the batch at offset off of tp.
func batchAt(s *strata.Store, tp strata.TopicPartition, off int64) (log.BatchHeader, []byte, error) {
	p, err := strata.PartitionOf(s, tp.Topic, tp.Partition)
	if err != nil {
		return log.BatchHeader{}, nil, err
	}
	buf, err := p.ReadBatches(nil, off, 1<<20)
	if err != nil {
		return log.BatchHeader{}, nil, err
	}
	it := log.NewBatchIter(buf)
	for it.Next() {
		if h := it.Header(); h.LastOffset() >= off {
			return h, append([]byte(nil), it.Batch()...), nil
		}
	}
	if err := it.Err(); err != nil {
		return log.BatchHeader{}, nil, err
	}
	return log.BatchHeader{}, nil, fmt.Errorf("no batch at %d of %v", off, tp)
}

// eosRecord is a record of a partition as the exactly-once check reads it.
type eosRecord struct {
	offset     int64
	key, value string
	// state is "plain" (outside any transaction), "committed", "aborted"
	// or "open".
	state string
	h     log.BatchHeader // of its batch
}

// visible says whether a ReadCommitted reader reads r.
func (r eosRecord) visible() bool { return r.state == "plain" || r.state == "committed" }

// eosRead reads every record of tp, with the state of its transaction.
func eosRead(t *testing.T, s *strata.Store, tp strata.TopicPartition) []eosRecord {
	t.Helper()
	p, err := strata.PartitionOf(s, tp.Topic, tp.Partition)
	require.NoError(t, err)
	var (
		out     []eosRecord
		pending = map[int64][]int{} // producer id → its open records
		buf     []byte
	)
	for off := p.StartOffset(); off < p.HighWatermark(); {
		buf, err = p.ReadBatches(buf, off, 1<<20)
		require.NoError(t, err)
		if len(buf) == 0 {
			// A hole: a crash under SyncEvery can lose a segment's
			// unsynced tail and keep the next segment.
			next := off
			for _, seg := range p.Segments() {
				if seg.Base > off {
					next = seg.Base
					break
				}
			}
			require.Greater(t, next, off, "%v: nothing to read at %d, below the high watermark %d", tp, off, p.HighWatermark())
			off = next
			continue
		}
		it := log.NewBatchIter(buf)
		for it.Next() {
			h := it.Header()
			off = h.NextOffset()
			recs, err := log.NewRecordIterHeader(it.Batch(), h)
			require.NoError(t, err)
			var r log.Record
			for recs.Next(&r) {
				if h.IsControl() {
					typ, err := log.ParseControlKey(r.Key)
					require.NoError(t, err)
					state := "aborted"
					if typ == log.ControlCommit {
						state = "committed"
					}
					for _, i := range pending[h.ProducerID] {
						out[i].state = state
					}
					delete(pending, h.ProducerID)
					continue
				}
				er := eosRecord{offset: r.Offset, key: string(r.Key), value: string(r.Value), state: "plain", h: h}
				if h.IsTransactional() {
					er.state = "open"
					pending[h.ProducerID] = append(pending[h.ProducerID], len(out))
				}
				out = append(out, er)
			}
		}
		require.NoError(t, it.Err())
	}
	return out
}
