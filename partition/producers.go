package partition

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/stratalog/strata/log"
)

// maxProducerBatches is how many of a producer's last batches the partition
// remembers to answer a retry with the original offset (Kafka's
// ProducerStateEntry.NUM_BATCHES_TO_RETAIN, also the most in-flight
// requests an idempotent Kafka producer allows).
const maxProducerBatches = 5

// noProducer is the producer id of a batch that has none, and the epoch and
// sequence such a batch carries (Kafka's NO_PRODUCER_ID, NO_PRODUCER_EPOCH,
// NO_SEQUENCE).
const noProducer = -1

// producerBatchMeta describes one batch a producer wrote: its sequence range
// and offset range, and its max timestamp.
type producerBatchMeta struct {
	firstSeq, lastSeq       int32
	firstOffset, lastOffset int64
	timestamp               int64
}

// producerEntry is what the partition knows of one producer id, as Kafka's
// ProducerStateEntry
// (storage/src/main/java/org/apache/kafka/storage/internals/log/ProducerStateEntry.java):
// its current epoch, its last batches at that epoch (oldest first), the
// timestamp of its last write, the coordinator epoch of its last marker,
// and the first offset of its transaction open in the partition.
type producerEntry struct {
	id    int64
	epoch int16 // noProducer until a batch or marker sets it
	// batches is a ring of the batches held: batch(0), the oldest, is at
	// head, and n are held.
	batches          [maxProducerBatches]producerBatchMeta
	head, n          int
	lastTimestamp    int64 // ms: the last batch's max timestamp, or the last marker's
	coordinatorEpoch int32 // -1 until a marker sets it
	txnFirst         int64 // first offset of the open transaction, -1 if none
}

func newProducerEntry(id int64) *producerEntry {
	return &producerEntry{id: id, epoch: noProducer, coordinatorEpoch: -1, txnFirst: -1, lastTimestamp: -1}
}

// setEpoch makes epoch the producer's current one: a new epoch forgets the
// batches of the old.
func (e *producerEntry) setEpoch(epoch int16) {
	if e.epoch != epoch {
		e.epoch, e.n, e.head = epoch, 0, 0
	}
}

// ring returns the position in batches of the i-th oldest batch (i <
// maxProducerBatches). It wraps without a division: this is on every
// producer's append.
func (e *producerEntry) ring(i int) int {
	if i += e.head; i >= maxProducerBatches {
		i -= maxProducerBatches
	}
	return i
}

// batch returns the i-th oldest batch held (i < n).
func (e *producerEntry) batch(i int) producerBatchMeta { return e.batches[e.ring(i)] }

// last returns the last batch held (n > 0).
func (e *producerEntry) last() *producerBatchMeta { return &e.batches[e.ring(e.n-1)] }

// addBatch remembers b, forgetting the oldest batch if five are held.
func (e *producerEntry) addBatch(b producerBatchMeta) {
	if e.n == maxProducerBatches {
		e.batches[e.head] = b
		e.head = e.ring(1)
	} else {
		e.batches[e.ring(e.n)] = b
		e.n++
	}
	e.lastTimestamp = b.timestamp
}

// lastSeq returns the last sequence of the producer's last batch, or
// noProducer if it holds none.
func (e *producerEntry) lastSeq() int32 {
	if e.n == 0 {
		return noProducer
	}
	return e.last().lastSeq
}

// duplicate returns the remembered batch with exactly the sequence range
// [first, last] at the current epoch, if there is one.
func (e *producerEntry) duplicate(epoch int16, first, last int32) (producerBatchMeta, bool) {
	if e.epoch != epoch {
		return producerBatchMeta{}, false
	}
	for i := range e.n {
		if b := e.batch(i); b.firstSeq == first && b.lastSeq == last {
			return b, true
		}
	}
	return producerBatchMeta{}, false
}

// txnSpan is a transaction that keeps the last stable offset down: open
// (last −1), or ended by a marker at last that readers cannot see yet (at
// or past the high watermark, under SyncAlways before its fsync).
type txnSpan struct {
	pid   int64
	first int64
	last  int64
}

// producerState is the partition's producer state: an entry per producer
// id, and the transactions that are open or whose marker is not yet
// visible, by first offset. It is guarded by the partition's mu.
type producerState struct {
	entries map[int64]*producerEntry
	txns    []txnSpan
	recent  *producerEntry // the entry looked up last (a partition often has one producer), nil if none
}

// lookup returns the producer's entry, nil if it has none.
func (ps *producerState) lookup(pid int64) *producerEntry {
	if e := ps.recent; e != nil && e.id == pid {
		return e
	}
	e := ps.entries[pid]
	if e != nil {
		ps.recent = e
	}
	return e
}

// remove forgets the producer.
func (ps *producerState) remove(pid int64) {
	delete(ps.entries, pid)
	if ps.recent != nil && ps.recent.id == pid {
		ps.recent = nil
	}
}

// inSequence reports whether next follows last (MaxInt32 is followed by 0).
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

// checkData checks a data batch of a producer against its state, as
// Kafka's ProducerAppendInfo does for a client's batch
// (storage/src/main/java/org/apache/kafka/storage/internals/log/ProducerAppendInfo.java):
// a retry of one of the producer's last batches at its epoch (the same
// first and last sequence) is a duplicate, returned; an older epoch is
// fenced; a newer epoch must start at sequence 0, unless the partition
// knows no epoch of the producer; at the current epoch the sequence must
// follow the last batch's; a producer with an open transaction must write
// transactional batches.
func (ps *producerState) checkData(h log.BatchHeader) (*producerEntry, producerBatchMeta, bool, error) {
	first := h.BaseSequence
	last := log.IncrementSequence(first, h.LastOffsetDelta)
	e := ps.lookup(h.ProducerID)
	if e == nil {
		return nil, producerBatchMeta{}, false, nil // a producer the partition does not know: any sequence
	}
	if b, ok := e.duplicate(h.ProducerEpoch, first, last); ok {
		return e, b, true, nil
	}
	switch {
	case h.ProducerEpoch < e.epoch:
		return nil, producerBatchMeta{}, false, fmt.Errorf("producer %d at epoch %d, older than its current epoch %d: %w",
			h.ProducerID, h.ProducerEpoch, e.epoch, ErrProducerFenced)
	case h.ProducerEpoch != e.epoch:
		if first != 0 && e.epoch != noProducer {
			return nil, producerBatchMeta{}, false, fmt.Errorf("producer %d starts its new epoch %d at sequence %d, not 0 (its epoch was %d): %w",
				h.ProducerID, h.ProducerEpoch, first, e.epoch, ErrOutOfOrderSequence)
		}
	case !inSequence(e.lastSeq(), first):
		return nil, producerBatchMeta{}, false, fmt.Errorf("producer %d at epoch %d sent sequence %d, after %d (the next is %d): %w",
			h.ProducerID, h.ProducerEpoch, first, e.lastSeq(), log.IncrementSequence(e.lastSeq(), 1), ErrOutOfOrderSequence)
	}
	if e.txnFirst >= 0 && !h.IsTransactional() {
		return nil, producerBatchMeta{}, false, fmt.Errorf("producer %d has a transaction open from offset %d: %w",
			h.ProducerID, e.txnFirst, ErrInvalidTxnState)
	}
	return e, producerBatchMeta{}, false, nil
}

// applyData enters a data batch written at h.BaseOffset into the state, of
// the producer whose entry is e (nil: looked up, or made). It
// reports whether the batch opened a transaction. An empty batch, which
// only compaction leaves (keeping a producer's last batch), opens none: its
// transaction's marker may be gone.
func (ps *producerState) applyData(h log.BatchHeader, e *producerEntry) bool {
	if e == nil {
		e = ps.entry(h.ProducerID)
	}
	e.setEpoch(h.ProducerEpoch)
	e.addBatch(producerBatchMeta{
		firstSeq:    h.BaseSequence,
		lastSeq:     log.IncrementSequence(h.BaseSequence, h.LastOffsetDelta),
		firstOffset: h.BaseOffset,
		lastOffset:  h.LastOffset(),
		timestamp:   h.MaxTimestamp,
	})
	if h.IsTransactional() && e.txnFirst < 0 && h.NumRecords > 0 {
		e.txnFirst = h.BaseOffset
		ps.addTxn(txnSpan{pid: h.ProducerID, first: h.BaseOffset, last: -1})
		return true
	}
	return false
}

// entry returns the producer's entry, made if it has none.
func (ps *producerState) entry(pid int64) *producerEntry {
	e := ps.lookup(pid)
	if e == nil {
		if ps.entries == nil {
			ps.entries = map[int64]*producerEntry{}
		}
		e = newProducerEntry(pid)
		ps.entries[pid] = e
	}
	return e
}

// checkMarker checks a marker of producer pid at epoch from a coordinator
// at coordinatorEpoch, as Kafka's ProducerAppendInfo.appendEndTxnMarker
// does for the transaction versions before 2: an older epoch is fenced, and
// so is an older coordinator epoch.
func (ps *producerState) checkMarker(pid int64, epoch int16, coordinatorEpoch int32) error {
	e := ps.lookup(pid)
	switch {
	case e == nil:
		return nil
	case epoch < e.epoch:
		return fmt.Errorf("marker for producer %d at epoch %d, older than its current epoch %d: %w", pid, epoch, e.epoch, ErrProducerFenced)
	case coordinatorEpoch < e.coordinatorEpoch:
		return fmt.Errorf("marker for producer %d from coordinator epoch %d, older than %d: %w", pid, coordinatorEpoch, e.coordinatorEpoch, ErrCoordinatorFenced)
	}
	return nil
}

// applyMarker enters a marker written at offset into the state: it ends
// the producer's open transaction, if any, which it returns (ok false if
// there was none). The transaction keeps the last stable offset down until
// readers see the marker, unless decided (WriteDecidedMarker).
func (ps *producerState) applyMarker(pid int64, epoch int16, coordinatorEpoch int32, offset, ts int64, decided bool) (txnSpan, bool) {
	e := ps.entry(pid)
	var done txnSpan
	ok := e.txnFirst >= 0
	if ok {
		done = txnSpan{pid: pid, first: e.txnFirst, last: offset}
		for i := range ps.txns {
			if t := &ps.txns[i]; t.pid == pid && t.first == e.txnFirst && t.last < 0 {
				if decided {
					ps.txns = slices.Delete(ps.txns, i, i+1)
				} else {
					t.last = offset
				}
				break
			}
		}
	}
	e.setEpoch(epoch)
	e.coordinatorEpoch = coordinatorEpoch
	e.txnFirst = -1
	e.lastTimestamp = ts
	return done, ok
}

// stableAfter returns the last stable offset to record with done, an
// ended transaction, in the aborted-transaction index (Kafka's
// ProducerStateManager.lastStableOffset): the first offset of the
// earliest transaction of another producer still open, or the offset after
// done's marker.
func (ps *producerState) stableAfter(done txnSpan) int64 {
	for _, t := range ps.txns {
		if t.last < 0 && t.pid != done.pid {
			return t.first
		}
	}
	return done.last + 1
}

// addTxn enters t in the list by first offset.
func (ps *producerState) addTxn(t txnSpan) {
	i, _ := slices.BinarySearchFunc(ps.txns, t.first, func(s txnSpan, first int64) int { return cmp.Compare(s.first, first) })
	ps.txns = slices.Insert(ps.txns, i, t)
}

// prune drops the ended transactions whose markers lie below hw: readers
// see them.
func (ps *producerState) prune(hw int64) {
	ps.txns = slices.DeleteFunc(ps.txns, func(t txnSpan) bool { return t.last >= 0 && t.last < hw })
}

// publishTxnsMuLocked publishes the transactions that keep the last stable
// offset down, for LastStableOffset, after a change. The caller holds mu.
func (p *Partition) publishTxnsMuLocked() {
	ps := &p.mu.producers
	ps.prune(p.HighWatermark())
	if len(ps.txns) == 0 {
		p.unstable.Store(nil)
		return
	}
	txns := slices.Clone(ps.txns)
	p.unstable.Store(&txns)
}

// LastStableOffset returns the offset below which every transaction in the
// partition is decided (Kafka's last stable offset): the first offset of
// the earliest transaction still open, or ended by a marker readers cannot
// see yet, and otherwise the high watermark. It is never past
// HighWatermark. A read_committed reader reads only below it.
func (p *Partition) LastStableOffset() int64 {
	if p.cfg.ReadOnly {
		p.followTxns()
	}
	hw := p.HighWatermark()
	if u := p.unstable.Load(); u != nil {
		for _, t := range *u {
			if t.last < 0 || t.last >= hw {
				return min(t.first, hw)
			}
		}
	}
	return hw
}
