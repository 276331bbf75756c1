package strata

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/txn"
)

// TransactionStateTopic is the internal, compacted topic of one partition
// that holds the state of each transactional id, in Kafka's record format
// (package txn), as Kafka's __transaction_state does.
const TransactionStateTopic = "__transaction_state"

// txnTopicConfig is the configuration of TransactionStateTopic; its flush
// policy is set by txnLogSync.
var txnTopicConfig = TopicConfig{
	Partitions:    1,
	CleanupPolicy: CleanupCompact,
	SegmentBytes:  16 << 20, // the records are small; Kafka uses 100 MiB
}

// txnCoordinator is the store's transaction coordinator: the state of each
// transactional id, the transactions open, and the writes that move them
// from state to state.
type txnCoordinator struct {
	s *Store

	// loadMu serializes the replay of TransactionStateTopic that a clean
	// Open defers (see ensureLoaded): deferred is the topic until it is
	// replayed, nil after; loaded is set once the ids' states are known.
	loadMu   sync.Mutex
	deferred *topic.Topic
	loaded   atomic.Bool

	mu     sync.Mutex
	ids    map[string]*txnEntry
	closed bool
	// compacting counts the cleanings of TransactionStateTopic under
	// way (see compactLog).
	compacting int
	// logConfig is the configuration TransactionStateTopic is created
	// with: txnTopicConfig (tests shrink its segments).
	logConfig TopicConfig
	// held counts the offsets the open transactions hold
	// (Store.PendingTxnOffset).
	held heldOffsets
}

// txnEntry is one transactional id. Whoever changes its state (BeginTxn,
// a Commit or Abort, an expiry, recovery) holds sem, which guards meta
// and live.
type txnEntry struct {
	id  string
	sem chan struct{} // a token in it while held
	// meta is the id's state: as last written, except that BeginTxn sets
	// the producer id and epoch of the new transaction and clears the
	// partitions before anything is written. ProducerID is -1 until the
	// id has one.
	meta txn.Metadata
	live *Txn // the open transaction, nil if none
	// markers are those the id's transactions wrote that may not be
	// durable yet. A crash that loses one leaves its transaction open in
	// the partition, and Open ends it as the id's last PrepareCommit or
	// CompleteCommit record says (see sweep); so each must be durable
	// before a record can take that one's place: the id's next
	// PrepareCommit, its tombstone, and a cleaning of
	// TransactionStateTopic, which keeps only the id's last record (see
	// syncMarkersLocked).
	markers []txnMarker
	// committed is the producer id and epoch of the id's last transaction
	// whose PrepareCommit or CompleteCommit record replay found; -1 if
	// none. Open decides by it the transactions a crash left open in
	// partitions.
	committedPID   int64
	committedEpoch int16
	// gone is set when the id expired and the entry left the map: whoever
	// waited for sem takes the map's entry instead.
	gone bool
	// expiredPID and expiredEpoch are the TxnProducer whose transaction
	// a timeout aborted, fencing it, until the id's next InitTxnProducer
	// or BeginTxn; expiredPID is -1 if none.
	expiredPID   int64
	expiredEpoch int16
	// wireEnd is how the TxnProducer's last transaction ended (a
	// wireEnd constant), for a retry of its EndTxn.
	wireEnd int8
}

// txnMarker is a marker written to a partition, at an offset.
type txnMarker struct {
	tp     txn.Partition
	p      *partition.Partition
	offset int64
}

func newTxnCoordinator(s *Store) *txnCoordinator {
	c := &txnCoordinator{s: s, ids: map[string]*txnEntry{}, logConfig: txnTopicConfig}
	c.loaded.Store(true)
	return c
}

// entry returns the id's entry, creating it.
func (c *txnCoordinator) entry(id string) *txnEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.ids[id]
	if e == nil {
		e = &txnEntry{id: id, sem: make(chan struct{}, 1), meta: txn.Metadata{ProducerID: -1, PreviousProducerID: -1, NextProducerID: -1}, committedPID: -1, expiredPID: -1}
		c.ids[id] = e
	}
	return e
}

func (e *txnEntry) lock(ctx context.Context) error {
	select {
	case e.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *txnEntry) unlock() { <-e.sem }

func (c *txnCoordinator) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// begin opens a transaction of opts.ID (see BeginTxn).
func (c *txnCoordinator) begin(ctx context.Context, opts TxnOptions) (*Txn, error) {
	e, err := c.lockEntry(ctx, opts.ID, true)
	if err != nil {
		return nil, err
	}
	defer e.unlock()
	if err := c.newEpochLocked(e, "BeginTxn", opts.Timeout); err != nil {
		return nil, err
	}
	pid, epoch := e.meta.ProducerID, e.meta.ProducerEpoch
	e.meta.Partitions = nil
	t := &Txn{s: c.s, e: e, id: opts.ID, pid: pid, epoch: epoch, timeout: opts.Timeout, start: c.s.opts.Now()}
	t.expiry = time.AfterFunc(opts.Timeout, func() { c.expire(t) })
	e.live = t
	return t, nil
}

// newEpochLocked starts a new producer session of the id, at timeout:
// it fences the id's open transaction, if any, aborting it at a bumped
// epoch (the call of the newer producer, by, is named in its error),
// finishes what the last transaction left, and gives the id its next
// epoch. The caller holds e's sem.
func (c *txnCoordinator) newEpochLocked(e *txnEntry, by string, timeout time.Duration) error {
	if old := e.live; old != nil {
		// Kafka's fencing of a zombie: a bumped epoch that the old
		// producer's writes are refused with, and its transaction aborted
		// at it.
		err := c.abortLocked(e, old, fmt.Errorf("strata: transaction %q: a newer %s of its id fenced it: %w", e.id, by, ErrProducerFenced))
		if err != nil {
			return err
		}
	}
	// A failure can have left the last transaction unfinished (a marker
	// that could not be written): it is finished first, as Kafka's
	// coordinator retries its markers until they are written.
	if err := c.settleLocked(e); err != nil {
		return err
	}
	// A new id, or one whose epochs are used up, gets a new producer id,
	// as Kafka's InitProducerId gives at epoch exhaustion.
	if err := c.nextEpochLocked(e); err != nil {
		return err
	}
	e.expiredPID, e.wireEnd = -1, wireEndNone
	e.meta.Timeout = timeout
	return nil
}

// expire aborts t once its timeout has passed, if it is still open.
func (c *txnCoordinator) expire(t *Txn) {
	e := t.e
	_ = e.lock(context.Background())
	defer e.unlock()
	if e.live != t || c.isClosed() {
		return
	}
	err := fmt.Errorf("strata: transaction %q open for longer than its timeout of %v: %w", e.id, t.timeout, ErrTxnTimedOut)
	if aerr := c.abortLocked(e, t, err); aerr != nil {
		c.s.opts.Logger.Error("strata: aborting a transaction that timed out", "id", e.id, "err", aerr)
	}
	if t.wire {
		e.expiredPID, e.expiredEpoch = t.pid, t.epoch
	}
}

// abortLocked ends live transaction t with reason (its calls return it
// from now on) and aborts what it wrote, at an epoch one higher than its
// own, which fences its producer in every partition it wrote to. The
// caller holds e's sem.
func (c *txnCoordinator) abortLocked(e *txnEntry, t *Txn, reason error) error {
	t.finish(reason)
	e.live = nil
	if e.meta.ProducerEpoch < math.MaxInt16-1 {
		e.meta.ProducerEpoch++
	}
	if len(e.meta.Partitions) == 0 {
		return nil
	}
	return c.completeLocked(e, false)
}

// finish ends t with reason and drops what it held.
func (t *Txn) finish(reason error) {
	t.expiry.Stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.err = reason
	for _, p := range t.mu.parts {
		p.free()
	}
	t.s.txns.held.release(t.mu.offsets)
	t.mu.parts, t.mu.order, t.mu.offsets = nil, nil, nil
}

// end commits (commit set) or aborts t: see Txn.Commit and Txn.Abort.
func (c *txnCoordinator) end(ctx context.Context, t *Txn, commit bool) error {
	e := t.e
	if err := e.lock(ctx); err != nil {
		return err
	}
	defer e.unlock()
	return c.endOpenLocked(ctx, e, t, commit)
}

// endOpenLocked commits (commit set) or aborts t, the id's open
// transaction. The caller holds e's sem.
func (c *txnCoordinator) endOpenLocked(ctx context.Context, e *txnEntry, t *Txn, commit bool) error {
	t.mu.Lock()
	err := t.openLocked()
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		t.mu.Unlock()
		return err
	}
	parts, order, offsets := t.mu.parts, t.mu.order, t.mu.offsets
	t.mu.parts, t.mu.order, t.mu.offsets = nil, nil, nil
	t.mu.err = ErrTxnDone
	t.mu.Unlock()
	t.expiry.Stop()
	e.live = nil
	defer func() {
		for _, p := range parts {
			p.free()
		}
		// Once the commit's offsets are the group's, or pending in
		// the group's log, or dropped.
		c.held.release(offsets)
	}()
	if !commit {
		if len(e.meta.Partitions) == 0 {
			return nil
		}
		return c.completeLocked(e, false)
	}
	if err := c.writeLocked(e, t, parts, order, offsets); err != nil {
		return c.failLocked(e, err)
	}
	switch {
	case len(e.meta.Partitions) == 0:
		return nil // nothing written: nothing to commit
	case len(e.meta.Partitions) == 1 && t.batches.Load() == 1:
		return c.commitOnePhaseLocked(e)
	}
	// The decision may be durable only once what it commits is.
	if err := c.syncParts(e.meta.Partitions); err != nil {
		return c.failLocked(e, err)
	}
	return c.completeLocked(e, true)
}

// commitOnePhaseLocked commits the id's transaction that wrote one batch
// to one partition. Its outcome needs no durable decision: the batch is
// there whole or not at all, and its COMMIT marker, made durable with it
// (one fsync of the partition, none of TransactionStateTopic), commits it.
// A crash before the marker is durable leaves the transaction open in the
// partition, and the next Open commits it if the PrepareCommit record
// survived, and aborts it otherwise: all or nothing either way. The caller
// holds e's sem.
func (c *txnCoordinator) commitOnePhaseLocked(e *txnEntry) error {
	// Its PrepareCommit is not fsynced, but may survive a crash all the
	// same: it takes the place of the last transaction's decision.
	if err := c.syncMarkersLocked(e); err != nil {
		return c.failLocked(e, err)
	}
	m := e.meta
	m.State, m.LastUpdate = txn.PrepareCommit, c.s.opts.Now()
	if err := c.writeState(e, m, false); err != nil {
		return c.failLocked(e, err)
	}
	e.meta = m
	markers, err := c.writeMarkers(m, true, false)
	e.markers = append(e.markers, markers...)
	if err == nil {
		err = c.syncParts(m.Partitions)
	}
	if err != nil {
		return fmt.Errorf("strata: transaction %q may be committed or not; the next Open commits it whole or aborts it: %w", e.id, err)
	}
	m.State, m.LastUpdate, m.Partitions = txn.CompleteCommit, c.s.opts.Now(), nil
	if err := c.writeState(e, m, false); err != nil {
		return fmt.Errorf("strata: transaction %q is committed, but its completion was not recorded: %w", e.id, err)
	}
	e.meta = m
	return nil
}

// failLocked aborts the id's transaction after err stopped its commit
// before the decision, and returns err.
func (c *txnCoordinator) failLocked(e *txnEntry, err error) error {
	if len(e.meta.Partitions) == 0 {
		return err
	}
	if aerr := c.completeLocked(e, false); aerr != nil {
		return errors.Join(err, aerr)
	}
	return err
}
