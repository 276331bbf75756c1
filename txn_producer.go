package strata

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/txn"
)

// Errors of transactional producers outside the store (InitTxnProducer).
// Match them with errors.Is.
var (
	// ErrInvalidTxnState means a call does not fit the state of the
	// transaction: a batch to a partition not added to it, offsets or an
	// end with no transaction open, a commit of one that was aborted, a
	// producer's batch outside its open transaction (Kafka's
	// INVALID_TXN_STATE).
	ErrInvalidTxnState = partition.ErrInvalidTxnState
	// ErrInvalidProducerIDMapping means a transactional id has no producer
	// id, or another one than the call names (Kafka's
	// INVALID_PRODUCER_ID_MAPPING).
	ErrInvalidProducerIDMapping = errors.New("strata: producer id not mapped to the transactional id")
	// ErrConcurrentTxns means the id's last transaction is decided but
	// its markers could not all be written yet; the call may be retried
	// (Kafka's CONCURRENT_TRANSACTIONS).
	ErrConcurrentTxns = errors.New("strata: the last transaction of the id is still being completed")
)

// TxnProducer names a transactional producer outside the store, a Kafka
// client's (Kafka's TransactionManager): its transactional id, and the
// producer id and epoch InitTxnProducer gave it. Its batches carry the
// producer id and epoch. A transaction of a TxnProducer keeps its epoch
// from one transaction to the next, as Kafka's transactions before
// version 2 (KIP-890) do; the next InitTxnProducer, or a BeginTxn, of the
// id bumps it and fences the producer.
type TxnProducer struct {
	ID         string // the transactional id
	ProducerID int64
	Epoch      int16
}

// TxnProducerOptions configure InitTxnProducer.
type TxnProducerOptions struct {
	// ID is the transactional id: 1 to 32767 bytes. Required.
	ID string
	// Timeout is how long each of the producer's transactions may stay
	// open, from the call that opens it: as TxnOptions.Timeout (default
	// 60 s, at most 15 minutes). A transaction open longer is aborted, and
	// the producer fenced: its calls return ErrTxnTimedOut until it calls
	// InitTxnProducer again.
	Timeout time.Duration
	// Current, if not nil, is the producer id and epoch the producer has
	// already (Kafka's InitProducerId v3+, KIP-360): InitTxnProducer bumps
	// its epoch, aborting a transaction it has open, to recover from an
	// error. Another producer id than the id's is
	// ErrInvalidProducerIDMapping; an epoch that is neither the id's
	// current one nor the one a timeout fenced is ErrProducerFenced.
	Current *TxnProducer
}

// InitTxnProducer starts a producer session of a transactional id outside
// the store (Kafka's InitProducerId with a transactional id): the id gets
// a producer id the first time and an epoch one higher at every call (a
// new producer id once the epochs run out). A transaction of the id still
// open, a Txn of BeginTxn's or an earlier TxnProducer's, is aborted and
// fenced, as BeginTxn fences one; one a failure left decided is finished
// first. It writes the id's record (state Empty, at the new epoch) to
// __transaction_state. The producer's transactions then run through
// AddTxnPartitions, AppendTxnBatch, CommitTxnOffsets and EndTxn, and share
// the id with BeginTxn: the next BeginTxn of the id fences the producer.
//
// Bad options are ErrInvalidConfig; ctx bounds the wait for a call of the
// id under way.
func (s *Store) InitTxnProducer(ctx context.Context, opts TxnProducerOptions) (_ TxnProducer, err error) {
	if err := s.checkWritable("init transactional producer"); err != nil {
		return TxnProducer{}, err
	}
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	if s.closed.Load() {
		return TxnProducer{}, ErrClosed
	}
	topts, err := TxnOptions{ID: opts.ID, Timeout: opts.Timeout}.check()
	if err != nil {
		return TxnProducer{}, err
	}
	if err := ctx.Err(); err != nil {
		return TxnProducer{}, err
	}
	return s.txns.initProducer(ctx, topts, opts.Current)
}

// AddTxnPartitions adds partitions to the producer's transaction, opening
// one if it has none (its timeout runs from then on): each is entered in
// the id's Ongoing record in __transaction_state before a batch can be
// written to it (Kafka's AddPartitionsToTxn). With no partitions it only
// opens the transaction (Kafka's AddOffsetsToTxn). An unknown topic or
// partition is its error, and none is added. A producer fenced since is
// ErrProducerFenced (or ErrTxnTimedOut, if its transaction timed out);
// another producer id than the id's, ErrInvalidProducerIDMapping.
//
// The first write of a transaction that follows a commit at the same epoch
// makes the last one's markers durable and fsyncs the Ongoing record
// (under SyncNever, neither): Open tells the two transactions apart by it.
func (s *Store) AddTxnPartitions(ctx context.Context, p TxnProducer, parts ...TopicPartition) (err error) {
	if err := s.checkWritable("add transaction partitions"); err != nil {
		return err
	}
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	if s.closed.Load() {
		return ErrClosed
	}
	add := make([]txn.Partition, 0, len(parts))
	for _, tp := range parts {
		t, err := s.userTopic("add to a transaction", tp.Topic)
		if err != nil {
			return err
		}
		if _, err := t.Partition(tp.Partition); err != nil {
			return err
		}
		add = append(add, txn.Partition{Topic: tp.Topic, Partition: int32(tp.Partition)})
	}
	return s.txns.addPartitions(ctx, p, add)
}

// AppendTxnBatch appends a transactional batch of the producer's (a Kafka
// client's RecordBatch with the transactional bit, its producer id and
// epoch) to a partition of its open transaction, as AppendBatch appends
// a batch: checked whole and stored as it came; a retry of one of the
// producer's last 5 batches writes nothing and returns the original's
// offset with dup true. It returns when the batch is in the OS; under
// SyncAlways, after an fsync. A partition not added with
// AddTxnPartitions, or no transaction open, is ErrInvalidTxnState; a batch
// that is not transactional, is a control batch, or carries another
// producer id or epoch than p is ErrInvalidProducer; a fenced producer is
// ErrProducerFenced (ErrTxnTimedOut after a timeout).
func (s *Store) AppendTxnBatch(ctx context.Context, p TxnProducer, topicName string, part int, batch []byte) (base int64, dup bool, err error) {
	if err := s.checkWritable("append"); err != nil {
		return -1, false, err
	}
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	pp, h, err := s.batchPartition(topicName, part, batch)
	if err != nil {
		return 0, false, err
	}
	switch {
	case !h.IsTransactional() || h.IsControl():
		return 0, false, fmt.Errorf("strata: append to %s-%d: a transaction's batch must be transactional and not a control batch (attributes %#x): %w", topicName, part, h.Attributes, ErrInvalidProducer)
	case h.ProducerID != p.ProducerID || h.ProducerEpoch != p.Epoch:
		return 0, false, fmt.Errorf("strata: append to %s-%d: a batch of producer %d at epoch %d in the transaction of producer %d at epoch %d: %w",
			topicName, part, h.ProducerID, h.ProducerEpoch, p.ProducerID, p.Epoch, ErrInvalidProducer)
	}
	if err := ctx.Err(); err != nil {
		return 0, false, err
	}
	return s.txns.appendBatch(ctx, p, txn.Partition{Topic: topicName, Partition: int32(part)}, pp, batch)
}

// CommitTxnOffsets adds a consumer group's offsets to the producer's open
// transaction (Kafka's TxnOffsetCommit): committed with it, or not at
// all. An offset is the next one to read and must lie in the partition's
// [start, end] (ErrOffsetOutOfRange); its Metadata is kept, at most 4096
// bytes (ErrMetadataTooLarge); CommitTime and TopicID are stamped. A later
// call for the same group and partition replaces the offset. The offsets
// are committed for the group whatever its members: the caller checks the
// member and generation a Kafka client sends (KIP-447). No transaction
// open is ErrInvalidTxnState.
func (s *Store) CommitTxnOffsets(ctx context.Context, p TxnProducer, groupName string, offsets map[TopicPartition]OffsetAndMetadata) (err error) {
	if err := s.checkWritable("commit"); err != nil {
		return err
	}
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	if s.closed.Load() {
		return ErrClosed
	}
	if err := group.ValidateGroupID(groupName); err != nil {
		return err
	}
	now := s.opts.Now()
	add := make(map[TopicPartition]OffsetAndMetadata, len(offsets))
	for tp, om := range offsets {
		if len(om.Metadata) > group.DefaultMetadataMaxBytes {
			return fmt.Errorf("strata: metadata of %d bytes for %s, over %d: %w", len(om.Metadata), tp, group.DefaultMetadataMaxBytes, ErrMetadataTooLarge)
		}
		id, err := s.checkCommit(tp.Topic, tp.Partition, om.Offset)
		if err != nil {
			return err
		}
		add[tp] = OffsetAndMetadata{Offset: om.Offset, Metadata: om.Metadata, CommitTime: now, TopicID: id}
	}
	return s.txns.commitOffsets(ctx, p, groupName, add)
}

// EndTxn commits (commit set) or aborts the producer's open transaction
// (Kafka's EndTxn), as Txn.Commit and Txn.Abort do, with the same
// durability: the batches and offsets, all or nothing, also across a
// crash. A retry of the last EndTxn of the producer, once it is done,
// returns nil; one the markers of which could not all be written writes
// them. No transaction open, or the opposite decision of the last one's,
// is ErrInvalidTxnState.
func (s *Store) EndTxn(ctx context.Context, p TxnProducer, commit bool) (err error) {
	if err := s.checkWritable("end transaction"); err != nil {
		return err
	}
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	if s.closed.Load() {
		return ErrClosed
	}
	return s.txns.endProducer(ctx, p, commit)
}

// lockEntry returns the entry of id, its sem held: created if create is
// set, and otherwise, for an id the coordinator does not know,
// ErrInvalidProducerIDMapping (so that calls of unknown ids leave
// nothing behind).
func (c *txnCoordinator) lockEntry(ctx context.Context, id string, create bool) (*txnEntry, error) {
	if err := c.ensureLoaded(); err != nil {
		return nil, err
	}
	get := func() *txnEntry {
		if create {
			return c.entry(id)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.ids[id]
	}
	e := get()
	for {
		if e == nil {
			return nil, fmt.Errorf("strata: transactional id %q has no producer: %w", id, ErrInvalidProducerIDMapping)
		}
		if err := e.lock(ctx); err != nil {
			return nil, err
		}
		if !e.gone {
			break
		}
		e.unlock()
		e = get()
	}
	if c.isClosed() {
		e.unlock()
		return nil, ErrClosed
	}
	return e, nil
}

// initProducer is InitTxnProducer.
func (c *txnCoordinator) initProducer(ctx context.Context, opts TxnOptions, cur *TxnProducer) (TxnProducer, error) {
	e, err := c.lockEntry(ctx, opts.ID, cur == nil)
	if err != nil {
		return TxnProducer{}, err
	}
	defer e.unlock()
	if cur != nil {
		switch {
		case e.meta.ProducerID < 0 || cur.ProducerID != e.meta.ProducerID:
			return TxnProducer{}, fmt.Errorf("strata: transactional id %q: producer %d is not its producer: %w", opts.ID, cur.ProducerID, ErrInvalidProducerIDMapping)
		case cur.Epoch != e.meta.ProducerEpoch && !e.timedOutIs(cur.ProducerID, cur.Epoch):
			return TxnProducer{}, fmt.Errorf("strata: transactional id %q: producer %d at epoch %d, not its epoch %d: %w", opts.ID, cur.ProducerID, cur.Epoch, e.meta.ProducerEpoch, ErrProducerFenced)
		}
	}
	if err := c.newEpochLocked(e, "producer", opts.Timeout); err != nil {
		return TxnProducer{}, err
	}
	m := e.meta
	m.State, m.Partitions, m.LastUpdate = txn.Empty, nil, c.s.opts.Now()
	if err := c.writeState(e, m, false); err != nil {
		return TxnProducer{}, err
	}
	e.meta = m
	return TxnProducer{ID: e.id, ProducerID: m.ProducerID, Epoch: m.ProducerEpoch}, nil
}

// settleLocked finishes what the id's last transaction left: the markers
// of a decided one a failure left unwritten, or the abort of one Ongoing
// with no Txn (its abort failed), at a newer epoch. The caller holds e's
// sem.
func (c *txnCoordinator) settleLocked(e *txnEntry) error {
	switch e.meta.State {
	case txn.PrepareCommit, txn.PrepareAbort:
		return c.finishLocked(e)
	case txn.Ongoing:
		if e.live != nil {
			return nil
		}
		if e.meta.ProducerEpoch < math.MaxInt16-1 {
			e.meta.ProducerEpoch++
		}
		return c.completeLocked(e, false)
	}
	return nil
}

// nextEpochLocked gives the id the next epoch of its producer id, or a new
// producer id at epoch 0 if it has none or its epochs are used up. The
// caller holds e's sem.
func (c *txnCoordinator) nextEpochLocked(e *txnEntry) error {
	pid, epoch := e.meta.ProducerID, e.meta.ProducerEpoch+1
	if pid < 0 || e.meta.ProducerEpoch >= math.MaxInt16-1 {
		id, err := c.s.newProducerID()
		if err != nil {
			return err
		}
		e.meta.PreviousProducerID = pid
		pid, epoch = id, 0
	}
	e.meta.ProducerID, e.meta.ProducerEpoch = pid, epoch
	return nil
}

// The ends of a TxnProducer's last transaction that EndTxn remembers for
// a retry (txnEntry.wireEnd).
const (
	wireEndNone int8 = iota
	wireEndCommit
	wireEndAbort
)

// timedOutIs reports whether pid at epoch is the producer whose
// transaction a timeout aborted, fencing it, and that has not called
// InitTxnProducer since.
func (e *txnEntry) timedOutIs(pid int64, epoch int16) bool {
	return e.expiredPID >= 0 && e.expiredPID == pid && e.expiredEpoch == epoch
}

// checkProducerLocked refuses a call of p that is not the id's producer
// at its current epoch. The caller holds e's sem.
func (e *txnEntry) checkProducerLocked(p TxnProducer) error {
	switch {
	case e.meta.ProducerID >= 0 && p.ProducerID == e.meta.ProducerID && p.Epoch == e.meta.ProducerEpoch:
		return nil
	case e.timedOutIs(p.ProducerID, p.Epoch):
		return fmt.Errorf("strata: transactional id %q: producer %d at epoch %d: its transaction was open longer than its timeout: %w", e.id, p.ProducerID, p.Epoch, ErrTxnTimedOut)
	case e.meta.ProducerID >= 0 && (p.ProducerID == e.meta.ProducerID || p.ProducerID == e.meta.PreviousProducerID):
		return fmt.Errorf("strata: transactional id %q: producer %d at epoch %d, fenced by producer %d at epoch %d: %w", e.id, p.ProducerID, p.Epoch, e.meta.ProducerID, e.meta.ProducerEpoch, ErrProducerFenced)
	}
	return fmt.Errorf("strata: transactional id %q: producer %d is not its producer: %w", e.id, p.ProducerID, ErrInvalidProducerIDMapping)
}

// producerTxnLocked returns p's open transaction, opening one if open is
// set (nil if none and open is not set). The caller holds e's sem.
func (c *txnCoordinator) producerTxnLocked(e *txnEntry, p TxnProducer, open bool) (*Txn, error) {
	if err := e.checkProducerLocked(p); err != nil {
		return nil, err
	}
	if e.live != nil && !e.live.wire {
		return nil, fmt.Errorf("strata: transactional id %q: producer %d at epoch %d is a BeginTxn's: %w", e.id, p.ProducerID, p.Epoch, ErrProducerFenced)
	}
	if e.live != nil || !open {
		return e.live, nil
	}
	if err := c.settleLocked(e); err != nil {
		return nil, fmt.Errorf("strata: transactional id %q: %w (%w)", e.id, ErrConcurrentTxns, err)
	}
	if err := e.checkProducerLocked(p); err != nil {
		return nil, err
	}
	timeout := e.meta.Timeout
	if timeout <= 0 || timeout > MaxTxnTimeout {
		timeout = DefaultTxnTimeout
	}
	t := &Txn{s: c.s, e: e, id: e.id, pid: p.ProducerID, epoch: p.Epoch, timeout: timeout, start: c.s.opts.Now(), wire: true}
	t.expiry = time.AfterFunc(timeout, func() { c.expire(t) })
	e.live = t
	e.wireEnd = wireEndNone
	return t, nil
}

// lockOpenTxn returns the entry of p's id, its sem held, and p's open
// transaction; with no transaction open, ErrInvalidTxnState. On error it
// holds nothing.
func (c *txnCoordinator) lockOpenTxn(ctx context.Context, p TxnProducer) (*txnEntry, *Txn, error) {
	e, err := c.lockEntry(ctx, p.ID, false)
	if err != nil {
		return nil, nil, err
	}
	t, err := c.producerTxnLocked(e, p, false)
	if err == nil && t == nil {
		err = fmt.Errorf("strata: transactional id %q has no transaction open: %w", e.id, ErrInvalidTxnState)
	}
	if err != nil {
		e.unlock()
		return nil, nil, err
	}
	return e, t, nil
}

// addPartitions is AddTxnPartitions.
func (c *txnCoordinator) addPartitions(ctx context.Context, p TxnProducer, add []txn.Partition) error {
	e, err := c.lockEntry(ctx, p.ID, false)
	if err != nil {
		return err
	}
	defer e.unlock()
	t, err := c.producerTxnLocked(e, p, true)
	if err != nil {
		return err
	}
	return c.addPartitionsLocked(e, t, add)
}

// appendBatch is AppendTxnBatch, to partition pp, named tp.
func (c *txnCoordinator) appendBatch(ctx context.Context, p TxnProducer, tp txn.Partition, pp *partition.Partition, batch []byte) (int64, bool, error) {
	e, t, err := c.lockOpenTxn(ctx, p)
	if err != nil {
		return 0, false, err
	}
	defer e.unlock()
	if !e.hasPartition(tp) {
		return 0, false, fmt.Errorf("strata: %s-%d was not added to the transaction of %q: %w", tp.Topic, tp.Partition, e.id, ErrInvalidTxnState)
	}
	base, dup, err := pp.AppendRawBatchProduced(batch)
	if err == nil && !dup {
		t.batches.Add(1)
	}
	return base, dup, err
}

// hasPartition reports whether the id's open transaction has tp. The
// caller holds e's sem.
func (e *txnEntry) hasPartition(tp txn.Partition) bool {
	if e.meta.State != txn.Ongoing {
		return false
	}
	for _, q := range e.meta.Partitions {
		if q == tp {
			return true
		}
	}
	return false
}

// commitOffsets is CommitTxnOffsets.
func (c *txnCoordinator) commitOffsets(ctx context.Context, p TxnProducer, groupName string, add map[TopicPartition]OffsetAndMetadata) error {
	e, t, err := c.lockOpenTxn(ctx, p)
	if err != nil {
		return err
	}
	defer e.unlock()
	return t.addOffsets(groupName, group.MemberRef{}, add)
}

// endProducer is EndTxn.
func (c *txnCoordinator) endProducer(ctx context.Context, p TxnProducer, commit bool) error {
	e, err := c.lockEntry(ctx, p.ID, false)
	if err != nil {
		return err
	}
	defer e.unlock()
	t, err := c.producerTxnLocked(e, p, false)
	if err != nil {
		return err
	}
	end := wireEndAbort
	if commit {
		end = wireEndCommit
	}
	if t == nil {
		// A retry of the last end.
		switch {
		case e.meta.State == txn.PrepareCommit && commit, e.meta.State == txn.PrepareAbort && !commit:
			return c.finishLocked(e)
		case e.wireEnd == end,
			e.wireEnd == wireEndNone && e.meta.State == txn.CompleteCommit && commit,
			e.wireEnd == wireEndNone && e.meta.State == txn.CompleteAbort && !commit:
			return nil
		}
		verb := "abort"
		if commit {
			verb = "commit"
		}
		return fmt.Errorf("strata: transactional id %q has no transaction open to %s: %w", e.id, verb, ErrInvalidTxnState)
	}
	err = c.endOpenLocked(ctx, e, t, commit)
	if err == nil {
		e.wireEnd = end
	}
	return err
}
