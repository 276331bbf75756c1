package partition

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/stratalog/strata/log"
)

// ProducerBatch says who wrote a batch, as Kafka's idempotent and
// transactional producers stamp it in the batch header: the producer id,
// its epoch, and the batch's base sequence.
type ProducerBatch struct {
	ID    int64 // producer id, at least 0
	Epoch int16 // producer epoch, at least 0
	// Seq is the base sequence: the sequence number of the batch's first
	// record (at least 0). The records that follow take the next numbers,
	// wrapping from MaxInt32 to 0, and the next batch of the producer at
	// the same epoch starts after the last.
	Seq int32
	// Transactional marks the batch as part of the producer's open
	// transaction in the partition (the header's transactional bit); the
	// first such batch opens it, and a marker (WriteMarker) ends it.
	Transactional bool
}

// check refuses fields out of range.
func (pb ProducerBatch) check() error {
	if pb.ID < 0 || pb.Epoch < 0 || pb.Seq < 0 {
		return fmt.Errorf("producer %d, epoch %d, sequence %d: each must be at least 0: %w", pb.ID, pb.Epoch, pb.Seq, ErrInvalidProducer)
	}
	return nil
}

// AppendProduced appends records as one batch, as AppendWith does, stamped
// with pb's producer id, epoch and base sequence, and returns the offset of
// its first record. The batch is checked against what the partition knows
// of the producer, under the lock that assigns offsets, as a Kafka broker
// checks an idempotent producer's batch:
//
//   - a retry of one of the producer's last 5 batches at its current epoch
//     (the same first and last sequence) writes nothing and returns the
//     original batch's first offset, with dup true;
//   - an epoch older than the producer's current one is ErrProducerFenced;
//   - a newer epoch must start at sequence 0, and at the current epoch the
//     base sequence must follow the last batch's last sequence; anything
//     else (a gap, or a retry of a batch older than the last 5) is
//     ErrOutOfOrderSequence. A producer the partition does not know (new,
//     or expired) may start at any sequence;
//   - a producer with a transaction open in the partition must write
//     transactional batches (ErrInvalidTxnState).
//
// None of the refusals writes anything. Negative fields are
// ErrInvalidProducer; the rest is as for Append. Under SyncAlways a
// duplicate returns once the original batch is durable.
//
// What the partition knows of its producers survives Close and a crash
// (see Open), and is dropped for a producer idle for longer than
// Config.ProducerIDExpiration without a transaction open.
func (p *Partition) AppendProduced(records []log.Record, pb ProducerBatch, c log.Compression, level int) (base int64, dup bool, err error) {
	if err := pb.check(); err != nil {
		return 0, false, fmt.Errorf("partition: append to %s: %w", p.name, err)
	}
	bufp := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(bufp)
	b, err := p.encode((*bufp)[:0], records, c, level, &pb)
	*bufp = b.bytes[:0]
	if err != nil {
		return 0, false, err
	}
	a, err := p.appendEncoded(b.bytes, &b.header, condition{end: anyEnd}, records)
	return a.base, a.dup, err
}

// EncodeProduced is EncodeWith for a batch of a producer: stamped with pb's
// producer id, epoch and base sequence (and the transactional bit), for
// AppendEncodedProduced. Negative fields are ErrInvalidProducer.
func (p *Partition) EncodeProduced(dst []byte, records []log.Record, pb ProducerBatch, c log.Compression, level int) (EncodedBatch, error) {
	if err := pb.check(); err != nil {
		return EncodedBatch{bytes: dst}, fmt.Errorf("partition: append to %s: %w", p.name, err)
	}
	return p.encode(dst, records, c, level, &pb)
}

// AppendEncodedProduced appends a batch from Encode or EncodeProduced, as
// AppendEncoded does; a producer's batch is checked as AppendProduced
// says, and a duplicate writes nothing and returns the original batch's
// first offset with dup true.
func (p *Partition) AppendEncodedProduced(b EncodedBatch) (base int64, dup bool, err error) {
	if b.bytes == nil {
		return 0, false, fmt.Errorf("partition: append to %s: %w", p.name, ErrEmptyBatch)
	}
	a, err := p.appendEncoded(b.bytes, &b.header, condition{end: anyEnd}, nil)
	return a.base, a.dup, err
}

// AppendRawBatchProduced is AppendRawBatch reporting, for a batch with a
// producer id (as a Kafka client sends it), whether it was a retry of one
// the partition holds: the checks are AppendProduced's, and a duplicate
// writes nothing and returns the original batch's first offset with dup
// true. A control batch with a producer id is a transaction marker, checked
// and entered as WriteMarker's; one that is not a COMMIT or ABORT marker is
// ErrInvalidProducer, as are a producer id below -1 and, with a producer
// id, a negative epoch or (in a data batch) a negative base sequence; a
// producer's data batch without records is ErrEmptyBatch. A batch without
// a producer id (-1) is appended as it is.
func (p *Partition) AppendRawBatchProduced(batch []byte) (base int64, dup bool, err error) {
	a, err := p.appendRaw(batch)
	return a.base, a.dup, err
}

// checkProducerFields refuses a raw batch's producer fields out of range.
func checkProducerFields(h log.BatchHeader) error {
	switch {
	case h.ProducerID == noProducer:
		return nil
	case h.ProducerID < 0:
		return fmt.Errorf("producer id %d is below -1 (none): %w", h.ProducerID, ErrInvalidProducer)
	case h.ProducerEpoch < 0:
		return fmt.Errorf("producer %d has epoch %d, below 0: %w", h.ProducerID, h.ProducerEpoch, ErrInvalidProducer)
	case h.IsControl():
		return nil
	case h.BaseSequence < 0:
		return fmt.Errorf("producer %d wrote a batch with base sequence %d, below 0: %w", h.ProducerID, h.BaseSequence, ErrInvalidProducer)
	case h.NumRecords == 0:
		return fmt.Errorf("producer %d wrote a batch without records: %w", h.ProducerID, ErrEmptyBatch)
	}
	return nil
}

// producerOp is what checking a producer's batch found: a duplicate, or
// the marker the batch holds.
type producerOp struct {
	entry   *producerEntry // the producer's, if the partition knows it
	dup     bool
	marker  bool // a control batch holding one
	m       marker
	decided bool // a marker of WriteDecidedMarker
}

// checkProducerMuLocked checks the batch of a producer (h.ProducerID is
// not noProducer) against the producer's state. The caller holds mu.
func (p *Partition) checkProducerMuLocked(batch []byte, h log.BatchHeader) (producerOp, producerBatchMeta, error) {
	ps := &p.mu.producers
	if !h.IsControl() {
		e, b, dup, err := ps.checkData(h)
		return producerOp{dup: dup, entry: e}, b, err
	}
	m, ok, err := parseMarker(batch, h)
	if err != nil || !ok {
		return producerOp{}, producerBatchMeta{}, err
	}
	return producerOp{marker: true, m: m}, producerBatchMeta{}, ps.checkMarker(h.ProducerID, h.ProducerEpoch, m.coordinatorEpoch)
}

// applyProducerMuLocked enters a producer's batch, written at h.BaseOffset,
// into the producer state, as op (from checkProducerMuLocked) describes
// it. An ABORT marker that ends a transaction enters it into the
// aborted-transaction index. The caller holds mu.
func (p *Partition) applyProducerMuLocked(op producerOp, h log.BatchHeader) error {
	ps := &p.mu.producers
	switch {
	case !h.IsControl():
		if ps.applyData(h, op.entry) {
			p.publishTxnsMuLocked()
		}
		return nil
	case !op.marker:
		return nil // an empty control batch
	}
	p.mu.markerEnd = h.BaseOffset + 1
	done, ended := ps.applyMarker(h.ProducerID, h.ProducerEpoch, op.m.coordinatorEpoch, h.BaseOffset, h.MaxTimestamp, op.decided)
	if !ended {
		return nil
	}
	var err error
	if !op.m.commit {
		err = p.addAbortedMuLocked(AbortedTxn{
			ProducerID:       done.pid,
			FirstOffset:      done.first,
			LastOffset:       done.last,
			LastStableOffset: ps.stableAfter(done),
		})
	}
	p.publishTxnsMuLocked()
	return err
}

// ProducerInfo describes a producer the partition knows, for tools.
type ProducerInfo struct {
	ID    int64
	Epoch int16
	// LastSequence is the last sequence number of the producer's last
	// batch at its epoch, -1 if the partition holds none (its last write
	// was a marker).
	LastSequence int32
	// LastOffset is the offset of that batch's last record, -1 if none.
	LastOffset int64
	// LastTimestamp is the max timestamp (ms) of the producer's last batch
	// or marker, which its expiry counts from.
	LastTimestamp int64
	// CoordinatorEpoch is the coordinator epoch of its last marker, -1 if
	// none.
	CoordinatorEpoch int32
	// TxnFirstOffset is the first offset of its open transaction, -1 if
	// none.
	TxnFirstOffset int64
}

// Producers describes the producers the partition knows, by id.
func (p *Partition) Producers() []ProducerInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ProducerInfo, 0, len(p.mu.producers.entries))
	for _, e := range p.mu.producers.entries {
		out = append(out, e.info())
	}
	slices.SortFunc(out, func(a, b ProducerInfo) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Producer describes producer id, as Producers does, and reports whether
// the partition knows it.
func (p *Partition) Producer(id int64) (ProducerInfo, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.mu.producers.lookup(id)
	if e == nil {
		return ProducerInfo{}, false
	}
	return e.info(), true
}

// info describes the producer for Producers.
func (e *producerEntry) info() ProducerInfo {
	info := ProducerInfo{
		ID: e.id, Epoch: e.epoch, LastSequence: e.lastSeq(), LastOffset: -1,
		LastTimestamp: e.lastTimestamp, CoordinatorEpoch: e.coordinatorEpoch, TxnFirstOffset: e.txnFirst,
	}
	if e.n > 0 {
		info.LastOffset = e.last().lastOffset
	}
	return info
}
