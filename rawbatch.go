package strata

import (
	"context"
	"fmt"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
)

// Errors of the batches AppendBatch takes from Kafka clients, Kafka's error
// codes of the same meaning. None of them changes the partition.
var (
	// ErrOutOfOrderSequence means an idempotent producer's batch does not
	// follow the last one it wrote at its epoch (a gap, or a retry of a
	// batch older than its last 5), or a new epoch does not start at
	// sequence 0 (Kafka's OUT_OF_ORDER_SEQUENCE_NUMBER).
	ErrOutOfOrderSequence = partition.ErrOutOfOrderSequence
	// ErrInvalidProducer means a batch's producer fields are out of range
	// (a producer id below -1, a negative epoch or sequence), or a batch
	// is one only the store's transactions write: a transactional batch
	// or a control batch (a transaction marker).
	ErrInvalidProducer = partition.ErrInvalidProducer
)

// AbortedTxn is a transaction its producer aborted: its batches lie in
// [FirstOffset, LastOffset) of the partition, LastOffset being its ABORT
// marker's offset. A read_committed reader skips the producer's batches in
// that range (Kafka's FetchResponse aborted_transactions).
type AbortedTxn = partition.AbortedTxn

// AppendBatch appends one Kafka RecordBatch (magic 2, as a Kafka client
// sends it in a Produce request, compressed or not) to a partition as it
// came, and returns its base offset. AppendBatch writes into batch (its
// base offset and, for a LogAppendTime topic, the append time, with the
// CRC) and keeps none of it: the caller may reuse it once AppendBatch
// returns.
//
// The batch is checked whole first, as Kafka's LogValidator does: a batch
// over the topic's MaxBatchBytes is ErrBatchTooLarge; a bad CRC, length or
// record is ErrCorrupt; a message of the formats before RecordBatch v2
// (magic 0 or 1) is ErrUnsupportedFormat; the topic's rules apply as they do to Append
// (ErrNoKey for a compacted topic, ErrTimestampTooFarAhead, LogAppendTime
// restamping, and a re-encoding when the topic forces its Compression). A
// transactional or control batch is ErrInvalidProducer: only the store's
// transactions (BeginTxn) write those.
//
// A batch with a producer id (an idempotent producer's, whose id came from
// NewProducerID) is checked against the producer's state: a retry of one of
// its last 5 batches writes nothing and returns the original batch's offset
// with dup true; a gap in its sequence is ErrOutOfOrderSequence, an older
// epoch ErrProducerFenced. A refused batch changes nothing. AppendBatch
// returns when the batch is in the OS; under SyncAlways, after an fsync.
// ctx is checked before anything is written.
func (s *Store) AppendBatch(ctx context.Context, topicName string, part int, batch []byte) (base int64, dup bool, err error) {
	if err := s.checkWritable("append"); err != nil {
		return -1, false, err
	}
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	p, h, err := s.batchPartition(topicName, part, batch)
	if err != nil {
		return 0, false, err
	}
	if h.IsControl() || h.IsTransactional() {
		return 0, false, fmt.Errorf("strata: append to %s-%d: a transactional or control batch (attributes %#x) is written only by the store's transactions: %w", topicName, part, h.Attributes, ErrInvalidProducer)
	}
	if err := ctx.Err(); err != nil {
		return 0, false, err
	}
	return p.AppendRawBatchProduced(batch)
}

// batchPartition returns the partition of a user topic that a Kafka
// client's batch goes to, and the batch's header: a batch whose header is
// short or bad is ErrIncomplete or ErrCorrupt, one of the formats before
// RecordBatch v2 ErrUnsupportedFormat. The rest of the batch is checked
// when it is appended.
func (s *Store) batchPartition(topicName string, part int, batch []byte) (*partition.Partition, log.BatchHeader, error) {
	t, err := s.userTopic("append", topicName)
	if err != nil {
		return nil, log.BatchHeader{}, err
	}
	p, err := t.Partition(part)
	if err != nil {
		return nil, log.BatchHeader{}, err
	}
	h, err := log.ReadHeader(batch)
	if err != nil {
		return nil, log.BatchHeader{}, fmt.Errorf("strata: append to %s-%d: %w", topicName, part, err)
	}
	if h.IsLegacy() {
		return nil, log.BatchHeader{}, fmt.Errorf("strata: append to %s-%d: a message of magic %d, not a RecordBatch (magic 2): %w", topicName, part, h.Magic, ErrUnsupportedFormat)
	}
	return p, h, nil
}

// ReadBatches appends to buf[:0] the whole stored batches of a partition
// from offset on that a read at the View's level sees, up to about
// maxBytes (at least one batch when any is visible), and returns them: the
// bytes as they are on disk, Kafka's RecordBatches back to back, as a
// Kafka Fetch response carries them. The first batch may start before
// offset (it holds offset); transaction markers are included, and under
// ReadCommitted so are aborted transactions' batches (AbortedTxns says
// which to skip), but nothing at or past the last stable offset. Reading
// at the visible end returns no bytes; an offset outside the partition's
// [start, end] is ErrOffsetOutOfRange. The bytes are a copy, valid until
// buf is reused; ReadBatches does not block (see Wait).
func (v View) ReadBatches(topicName string, part int, offset int64, maxBytes int, buf []byte) (_ []byte, err error) {
	defer wrapErr(&err)
	if err := checkIsolation(v.iso); err != nil {
		return buf[:0], err
	}
	p, err := v.s.partition(topicName, part)
	if err != nil {
		return buf[:0], err
	}
	iso := v.s.isolation(v.iso)
	end := readEnd(p, iso) // before the read: never more than it saw
	out, err := p.ReadBatches(buf, offset, maxBytes)
	if err != nil || iso != ReadCommitted {
		return out, err
	}
	_, cut := cutAt(out, end)
	return out[:len(out)-cut], nil
}

// Wait blocks until a read of the partition at the View's level sees
// offset (its visible end, the high watermark or under ReadCommitted the
// last stable offset, is past offset), ctx ends (its error) or the store
// closes (ErrClosed).
func (v View) Wait(ctx context.Context, topicName string, part int, offset int64) (err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	if err := checkIsolation(v.iso); err != nil {
		return err
	}
	p, err := v.s.partition(topicName, part)
	if err != nil {
		return err
	}
	return waitEnd(ctx, p, v.s.isolation(v.iso), offset)
}

// AbortedTxns returns the aborted transactions whose batches overlap
// [from, upto) of a partition, in the order their ABORT markers were
// written; none is an empty result.
func (s *Store) AbortedTxns(topicName string, part int, from, upto int64) (_ []AbortedTxn, err error) {
	defer wrapErr(&err)
	p, err := s.partition(topicName, part)
	if err != nil {
		return nil, err
	}
	return p.AbortedTxns(from, upto), nil
}

// NewProducerID hands out a producer id no other producer of the store has
// had, for an idempotent producer outside the store (a Kafka client's
// InitProducerId), whose batches then start at epoch 0, sequence 0. Ids
// are reserved on disk in blocks, so they stay unique across restarts.
func (s *Store) NewProducerID() (_ int64, err error) {
	if err := s.checkWritable("new producer id"); err != nil {
		return -1, err
	}
	defer wrapErr(&err)
	return s.newProducerID()
}
