package strata

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/txn"
)

// Transaction timeouts: Kafka's producer default (transaction.timeout.ms)
// and the broker's limit (transaction.max.timeout.ms).
const (
	DefaultTxnTimeout = 60 * time.Second
	MaxTxnTimeout     = 15 * time.Minute
)

// Errors of transactions. Match them with errors.Is.
var (
	// ErrTxnDone means the transaction was committed or aborted already.
	ErrTxnDone = errors.New("strata: transaction already committed or aborted")
	// ErrTxnTimedOut means the transaction stayed open longer than its
	// timeout and the store aborted it.
	ErrTxnTimedOut = errors.New("strata: transaction timed out and was aborted")
	// ErrProducerFenced means a newer producer of the same identity took
	// over: a transaction whose id a newer BeginTxn took, or a batch at an
	// epoch older than its producer's current one.
	ErrProducerFenced = partition.ErrProducerFenced
)

// TxnOptions configure a transaction.
type TxnOptions struct {
	// ID is the transactional id (Kafka's transactional.id): 1 to 32767
	// bytes. Transactions of one id follow each other: BeginTxn with the id
	// of a transaction still open aborts that one and fences it. Required.
	ID string
	// Timeout is how long the transaction may stay open, on the
	// process's clock (a timer, not Options.Now): after it the store
	// aborts it, and its calls return ErrTxnTimedOut. Default 60 s
	// (DefaultTxnTimeout, Kafka's transaction.timeout.ms); at most 15
	// minutes (MaxTxnTimeout, Kafka's transaction.max.timeout.ms).
	Timeout time.Duration
}

func (o TxnOptions) check() (TxnOptions, error) {
	if o.Timeout == 0 {
		o.Timeout = DefaultTxnTimeout
	}
	switch {
	case len(o.ID) == 0 || len(o.ID) > txn.MaxIDLen:
		return o, fmt.Errorf("strata: transactional id of %d bytes out of range [1, %d]: %w", len(o.ID), txn.MaxIDLen, ErrInvalidConfig)
	case o.Timeout < time.Millisecond || o.Timeout > MaxTxnTimeout:
		return o, fmt.Errorf("strata: transaction timeout %v out of range [1ms, %v]: %w", o.Timeout, MaxTxnTimeout, ErrInvalidConfig)
	}
	return o, nil
}

// Txn is an open transaction: records appended to any partitions of any
// topics and consumer-group offsets, which Commit commits together and
// Abort discards together. Readers with ReadCommitted isolation see all of
// a committed transaction or nothing of it, also after a crash at any
// point, partition by partition, as Kafka's do: a partition's records once
// its last stable offset has passed them (at the transaction's marker
// there, or, for records behind the first offset of another transaction
// still open in the partition, once that one ends too); and while Commit
// writes its markers, a partition, or the group's offsets, before others.
// ReadUncommitted readers (the default) see its records as they are
// written, and aborted ones too, as Kafka's do. See the README's
// "Transactions" for what each flush policy guarantees.
//
// The records are held in memory and written at Commit, as one batch per
// partition, except that a partition's records are written early, as a
// batch, once they fill the topic's MaxBatchBytes. A Txn is safe for
// concurrent use.
type Txn struct {
	s       *Store
	e       *txnEntry
	id      string
	pid     int64
	epoch   int16
	timeout time.Duration
	start   time.Time // by the store's clock, for the record
	expiry  *time.Timer
	batches atomic.Int32 // written to the partitions
	// wire marks the transaction of a TxnProducer, whose batches come
	// written (AppendTxnBatch): it holds no records, only offsets.
	wire bool

	mu struct {
		sync.Mutex
		err     error // why the transaction is over; nil while it is open
		parts   map[TopicPartition]*txnPart
		order   []TopicPartition // parts in the order of their first record
		offsets map[string]map[TopicPartition]OffsetAndMetadata
		// refs are, per group, the members that commit its partitions
		// of offsets (CommitConsumerOffsets); a partition not in it is
		// committed by no member (CommitOffsets). Kept once the
		// transaction ends: its Commit reads them as it writes.
		refs map[string]map[TopicPartition]group.MemberRef
	}
}

// txnPart is what a transaction holds for one partition: the records not
// written yet, and the sequence number of the next batch.
type txnPart struct {
	t    *topic.Topic
	part int
	// held are the records not written yet, a batch's worth per arena:
	// the last one fills, the others are full.
	held  []*arena
	bytes int   // of the records in the last arena, roughly as encoded
	seq   int32 // the next batch's base sequence
}

// records is how many records p holds.
func (p *txnPart) records() int {
	n := 0
	for _, a := range p.held {
		n += len(a.recs)
	}
	return n
}

// free recycles the arenas of p.
func (p *txnPart) free() {
	for _, a := range p.held {
		a.free()
	}
	p.held = nil
}

// BeginTxn opens a transaction of opts.ID. The id gets a producer id the
// first time, and an epoch one higher at each BeginTxn (Kafka's
// InitProducerId, and transaction version 2's bump per transaction): if a
// transaction of the id is still open, BeginTxn aborts it and fences it —
// its later calls return ErrProducerFenced — as Kafka fences a zombie
// producer. BeginTxn waits, as long as ctx allows, for a Commit or Abort
// of the id that is under way. What it writes is the end of the id's
// previous transaction (the abort of a fenced one, or the markers of a
// decided one a failure left unwritten) and, for a new id, the reservation
// of its producer id; the new transaction's first record in
// __transaction_state comes with its first partition.
//
// Bad options are ErrInvalidConfig. A ctx that has ended is its error,
// whether the id is new or not, and nothing changes.
func (s *Store) BeginTxn(ctx context.Context, opts TxnOptions) (_ *Txn, err error) {
	if err := s.checkWritable("begin transaction"); err != nil {
		return nil, err
	}
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	if s.closed.Load() {
		return nil, ErrClosed
	}
	opts, err = opts.check()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.txns.begin(ctx, opts)
}

// ID returns the transaction's transactional id.
func (t *Txn) ID() string { return t.id }

// Append adds records to the transaction, routed to the topic's
// partitions as Store.Append routes them (by key; keyless records to a
// sticky partition). The records are copied: the caller may reuse them.
// Each record is checked as AppendTo checks a batch of it alone: a record
// to a compacted topic needs a key (ErrNoKey), one stamped too far ahead
// is ErrTimestampTooFarAhead, one over the topic's MaxBatchBytes is
// ErrBatchTooLarge. An error changes nothing in the transaction, except
// an I/O error while a full batch is written early, which aborts it.
func (t *Txn) Append(ctx context.Context, topicName string, records ...Record) (err error) {
	defer wrapErr(&err)
	tp, err := t.s.userTopic("append", topicName)
	if err != nil {
		return err
	}
	parts := make([]int, len(records))
	keyless := false
	for i := range records {
		parts[i] = tp.Route(records[i].Key)
		keyless = keyless || records[i].Key == nil
	}
	if err := t.add(ctx, tp, parts, records); err != nil {
		return err
	}
	if keyless {
		tp.NextBatch()
	}
	return nil
}

// AppendTo adds records to one partition of a topic in the transaction.
// See Append.
func (t *Txn) AppendTo(ctx context.Context, topicName string, part int, records ...Record) (err error) {
	defer wrapErr(&err)
	tp, err := t.s.userTopic("append", topicName)
	if err != nil {
		return err
	}
	if _, err := tp.Partition(part); err != nil {
		return err
	}
	parts := make([]int, len(records))
	for i := range parts {
		parts[i] = part
	}
	return t.add(ctx, tp, parts, records)
}

// CommitOffsets adds a consumer group's offsets to the transaction (Kafka's
// sendOffsetsToTransaction): committed with it, or not at all. An offset is
// the next one to read, as in Consumer.CommitOffsets, and must lie in the
// partition's [start, end] (ErrOffsetOutOfRange). A later call for the same
// group and partition replaces the offset.
//
// The offsets are committed for the group whatever its members, as
// Kafka's sendOffsetsToTransaction with only a group id: nothing fences a
// consumer that was evicted while the transaction was open. For offsets of
// records a Consumer polled, use CommitConsumerOffsets.
func (t *Txn) CommitOffsets(ctx context.Context, groupName string, offsets map[TopicPartition]int64) (err error) {
	defer wrapErr(&err)
	if err := orBackground(ctx).Err(); err != nil {
		return err
	}
	if err := group.ValidateGroupID(groupName); err != nil {
		return err
	}
	add, err := t.checkOffsets(offsets)
	if err != nil {
		return err
	}
	return t.addOffsets(groupName, group.MemberRef{}, add)
}

// Commit commits the transaction: it writes the records still held, makes
// them durable (as the topics' flush policies say: see the README's
// "Transactions"), writes the decision (PrepareCommit) to
// __transaction_state durably, then a COMMIT marker to every partition the
// transaction wrote to, then CompleteCommit. It does not wait for the
// markers to be durable: readers see the transaction at once, the next
// fsync of each partition makes its marker durable (the id's next Commit
// does it for the partitions it does not write to), and a crash that
// loses one loses nothing of the outcome, since the next Open writes it
// again from the decision. A transaction of one batch in one partition
// needs no durable decision: its marker, durable with the batch, decides.
// Once Commit returns nil the transaction is committed, also across a
// crash. An error while it writes, before the decision, aborts the
// transaction; an error after it says so: the decision stands, and the
// next Open writes the missing markers. A transaction that wrote nothing
// writes nothing.
//
// ctx is checked before anything is written, and bounds only the wait for
// another call of the transaction under way (an early write of Append):
// if it has ended by then, Commit returns its error and the transaction
// stays open, as it was — Commit or Abort it again; its timeout still
// runs.
func (t *Txn) Commit(ctx context.Context) (err error) {
	defer wrapErr(&err)
	return t.s.txns.end(orBackground(ctx), t, true)
}

// Abort aborts the transaction: its records are never visible under
// ReadCommitted, and its offsets are not committed. The partitions it
// wrote to get an ABORT marker. Aborting a transaction that ended already
// returns the reason it ended (ErrTxnDone after Commit or Abort). A ctx
// that has ended before Abort begins is its error, and the transaction
// stays open, as for Commit.
func (t *Txn) Abort(ctx context.Context) (err error) {
	defer wrapErr(&err)
	return t.s.txns.end(orBackground(ctx), t, false)
}

// openLocked returns why the transaction is over, or nil. The caller
// holds t.mu.
func (t *Txn) openLocked() error {
	if t.mu.err != nil {
		return t.mu.err
	}
	if t.s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// add adds records, which go to parts, to the transaction.
func (t *Txn) add(ctx context.Context, tp *topic.Topic, parts []int, records []Record) error {
	if len(records) == 0 {
		return fmt.Errorf("strata: append to %s: %w", tp.Name(), ErrNoRecords)
	}
	if err := orBackground(ctx).Err(); err != nil {
		return err
	}
	// Each record as AppendTo would take it, alone: held, it is written
	// later in a batch with others, or alone if it fills one.
	for i := range records {
		p, err := tp.Partition(parts[i])
		if err != nil {
			return err
		}
		if err := p.CheckRecord(&records[i]); err != nil {
			if len(records) > 1 {
				return fmt.Errorf("strata: record %d of %d: %w", i, len(records), err)
			}
			return err
		}
	}
	limit := tp.Config().MaxBatchBytes - log.BatchHeaderSize
	t.mu.Lock()
	if err := t.openLocked(); err != nil {
		t.mu.Unlock()
		return err
	}
	var full []TopicPartition
	for i := range records {
		key := TopicPartition{Topic: tp.Name(), Partition: parts[i]}
		p := t.mu.parts[key]
		if p == nil {
			if t.mu.parts == nil {
				t.mu.parts = map[TopicPartition]*txnPart{}
			}
			p = &txnPart{t: tp, part: parts[i], held: []*arena{newArena(0)}}
			t.mu.parts[key] = p
			t.mu.order = append(t.mu.order, key)
		}
		size := recordSize(&records[i])
		if p.bytes > 0 && p.bytes+size > limit {
			p.held = append(p.held, newArena(0))
			p.bytes = 0
			full = append(full, key)
		}
		p.held[len(p.held)-1].add(&records[i], nil)
		p.bytes += size
	}
	t.mu.Unlock()
	if len(full) == 0 {
		return nil
	}
	return t.s.txns.flushEarly(ctx, t, full)
}

// recordSize bounds what r takes in a batch uncompressed, wherever it
// stands in it: its encoded size with the widest offset and timestamp
// deltas.
func recordSize(r *Record) int {
	return log.RecordSize(log.RecordFieldsSize(r), math.MaxInt32, math.MaxInt64)
}
