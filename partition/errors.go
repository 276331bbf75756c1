package partition

import (
	"errors"

	"github.com/stratalog/strata/log"
)

// Errors returned by partitions. Match them with errors.Is; the messages
// carry the details (the valid range, the size limit).
var (
	// ErrOutOfRange means an offset lies outside [StartOffset, EndOffset]
	// (for ReadRecord, outside [StartOffset, HighWatermark)).
	ErrOutOfRange = errors.New("partition: offset out of range")
	// ErrNoRecord means an offset in range holds no record: compaction
	// removed it, or a transaction marker (a control batch) takes it.
	ErrNoRecord = errors.New("partition: no record at offset")
	// ErrBatchTooLarge means an encoded batch is larger than MaxBatchBytes.
	ErrBatchTooLarge = errors.New("partition: batch too large")
	// ErrEmptyBatch means Append was given no records.
	ErrEmptyBatch = errors.New("partition: no records")
	// ErrTimestampTooFarAhead means a record's timestamp lies further ahead
	// of the clock than MaxTimestampSkew.
	ErrTimestampTooFarAhead = errors.New("partition: timestamp too far ahead")
	// ErrNoKey means a record without a key was appended to a compacted
	// partition.
	ErrNoKey = errors.New("partition: record has no key")
	// ErrInvalidConfig means a Config field is out of range.
	ErrInvalidConfig = errors.New("partition: invalid config")
	// ErrWrongKey means a record given to AppendIfLast has a key other
	// than the one checked.
	ErrWrongKey = errors.New("partition: record key is not the key checked")
	// ErrClosed means the partition was closed, or failed and closed itself
	// (the error that closed it is wrapped too).
	ErrClosed = errors.New("partition: closed")
	// ErrReadOnly means a write reached a partition opened read-only
	// (Config.ReadOnly), which never writes.
	ErrReadOnly = errors.New("store is read-only: it reads a directory another process may own, and writes nothing")
)

// Errors of producer batches (AppendProduced, AppendRawBatch of a batch
// with a producer id, WriteMarker), Kafka's error codes of the same
// meaning. None of them changes the partition.
var (
	// ErrOutOfOrderSequence means a batch's base sequence does not follow
	// the last one the producer wrote at its epoch (a gap, or a retry of a
	// batch older than the last 5), or that a new epoch does not start at
	// sequence 0 (Kafka's OUT_OF_ORDER_SEQUENCE_NUMBER).
	ErrOutOfOrderSequence = errors.New("partition: out of order sequence number")
	// ErrProducerFenced means a batch or marker carries an epoch older than
	// the producer's current one: a newer instance of the producer took
	// over (Kafka's INVALID_PRODUCER_EPOCH).
	ErrProducerFenced = errors.New("partition: producer fenced")
	// ErrInvalidProducer means a producer batch's fields are out of range:
	// a negative producer id, epoch or sequence, or a control batch that is
	// not a COMMIT or ABORT marker.
	ErrInvalidProducer = errors.New("partition: invalid producer batch")
	// ErrInvalidTxnState means a producer with a transaction open in the
	// partition wrote a batch outside it (Kafka's INVALID_TXN_STATE).
	ErrInvalidTxnState = errors.New("partition: invalid transaction state")
	// ErrCoordinatorFenced means a marker carries a coordinator epoch
	// older than one a marker of the producer already carried (Kafka's
	// TRANSACTION_COORDINATOR_FENCED).
	ErrCoordinatorFenced = errors.New("partition: transaction coordinator fenced")
)

// ErrCorruptCheckpoint means a checkpoint file does not hold an offset. It
// also matches log.ErrCorrupt, the one sentinel every layer's corruption
// matches. Open never fails with it: it logs it and takes the checkpoint
// for missing.
var ErrCorruptCheckpoint = log.Corruption("partition: corrupt checkpoint")
