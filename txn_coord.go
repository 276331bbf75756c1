package strata

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratalog/strata/log"
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
		e = &txnEntry{id: id, sem: make(chan struct{}, 1), meta: txn.Metadata{ProducerID: -1, PreviousProducerID: -1, NextProducerID: -1}, committedPID: -1}
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
	if err := c.ensureLoaded(); err != nil {
		return nil, err
	}
	e := c.entry(opts.ID)
	if err := e.lock(ctx); err != nil {
		return nil, err
	}
	for e.gone {
		e.unlock()
		e = c.entry(opts.ID)
		if err := e.lock(ctx); err != nil {
			return nil, err
		}
	}
	defer e.unlock()
	if c.isClosed() {
		return nil, ErrClosed
	}
	if old := e.live; old != nil {
		// Kafka's fencing of a zombie: a bumped epoch that the old
		// producer's writes are refused with, and its transaction aborted
		// at it.
		err := c.abortLocked(e, old, fmt.Errorf("strata: transaction %q: a newer BeginTxn of its id fenced it: %w", e.id, ErrProducerFenced))
		if err != nil {
			return nil, err
		}
	}
	// A failure can have left the last transaction unfinished (a marker
	// that could not be written): it is finished first, as Kafka's
	// coordinator retries its markers until they are written.
	switch e.meta.State {
	case txn.PrepareCommit, txn.PrepareAbort:
		if err := c.finishLocked(e); err != nil {
			return nil, err
		}
	case txn.Ongoing:
		if e.meta.ProducerEpoch < math.MaxInt16-1 {
			e.meta.ProducerEpoch++
		}
		if err := c.completeLocked(e, false); err != nil {
			return nil, err
		}
	}
	pid, epoch := e.meta.ProducerID, e.meta.ProducerEpoch+1
	if pid < 0 || e.meta.ProducerEpoch >= math.MaxInt16-1 {
		// A new id, or one whose epochs are used up: a new producer id,
		// as Kafka's InitProducerId gives at epoch exhaustion.
		id, err := c.s.newProducerID()
		if err != nil {
			return nil, err
		}
		e.meta.PreviousProducerID = pid
		pid, epoch = id, 0
	}
	e.meta.ProducerID, e.meta.ProducerEpoch = pid, epoch
	e.meta.Timeout = opts.Timeout
	e.meta.Partitions = nil
	t := &Txn{s: c.s, e: e, id: opts.ID, pid: pid, epoch: epoch, timeout: opts.Timeout, start: c.s.opts.Now()}
	t.expiry = time.AfterFunc(opts.Timeout, func() { c.expire(t) })
	e.live = t
	return t, nil
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
	t.mu.parts, t.mu.order, t.mu.offsets = nil, nil, nil
}

// end commits (commit set) or aborts t: see Txn.Commit and Txn.Abort.
func (c *txnCoordinator) end(ctx context.Context, t *Txn, commit bool) error {
	e := t.e
	if err := e.lock(ctx); err != nil {
		return err
	}
	defer e.unlock()
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

// flushEarly writes the records t holds for keys, at least a batch's worth
// each, before Commit (see Txn). An error aborts t.
func (c *txnCoordinator) flushEarly(ctx context.Context, t *Txn, keys []TopicPartition) error {
	e := t.e
	if err := e.lock(ctx); err != nil {
		return err
	}
	defer e.unlock()
	t.mu.Lock()
	if err := t.openLocked(); err != nil {
		t.mu.Unlock()
		return err
	}
	// The full arenas go; the last one, filling, stays.
	parts := make(map[TopicPartition]*txnPart, len(keys))
	var order []TopicPartition
	for _, k := range keys {
		p := t.mu.parts[k]
		if p == nil || len(p.held) < 2 || parts[k] != nil {
			continue
		}
		last := len(p.held) - 1
		parts[k] = &txnPart{t: p.t, part: p.part, held: p.held[:last], seq: p.seq}
		p.held = []*arena{p.held[last]}
		order = append(order, k)
	}
	t.mu.Unlock()
	err := c.writeLocked(e, t, parts, order, nil)
	t.mu.Lock()
	for k, p := range parts {
		p.free()
		if q := t.mu.parts[k]; q != nil {
			q.seq = p.seq
		}
	}
	t.mu.Unlock()
	if err != nil {
		if aerr := c.abortLocked(e, t, fmt.Errorf("strata: transaction %q aborted: %w", e.id, err)); aerr != nil {
			err = errors.Join(err, aerr)
		}
	}
	return err
}

// writeLocked writes t's records held in parts (in order) and its offsets:
// first the partitions new to the transaction into its Ongoing record,
// then the records as transactional batches of t's producer, and the
// offsets through the group coordinator. The caller holds e's sem.
func (c *txnCoordinator) writeLocked(e *txnEntry, t *Txn, parts map[TopicPartition]*txnPart, order []TopicPartition, offsets map[string]map[TopicPartition]OffsetAndMetadata) error {
	var add []txn.Partition
	for _, k := range order {
		if parts[k].records() > 0 {
			add = append(add, txn.Partition{Topic: k.Topic, Partition: int32(k.Partition)})
		}
	}
	if len(offsets) > 0 {
		add = append(add, txn.Partition{Topic: ConsumerOffsetsTopic, Partition: 0})
	}
	if err := c.addPartitionsLocked(e, t, add); err != nil {
		return err
	}
	// The offsets are written beside the records, not after them: each
	// append under SyncAlways waits for its own fsync.
	n := len(order)
	if len(offsets) > 0 {
		n++
	}
	syncs := len(offsets) > 0 && c.waitsForSync(ConsumerOffsetsTopic, 0, partition.SyncModeAlways)
	for _, k := range order {
		syncs = syncs || c.waitsForSync(k.Topic, k.Partition, partition.SyncModeAlways)
	}
	return forEach(n, syncs, func(i int) error {
		if i == len(order) {
			return c.commitOffsetsLocked(t, offsets)
		}
		p := parts[order[i]]
		for _, a := range p.held {
			if len(a.recs) == 0 {
				continue
			}
			if err := c.appendBatches(t, p, a.recs); err != nil {
				return err
			}
		}
		return nil
	})
}

// addPartitionsLocked enters the partitions of add that the id's
// transaction does not have yet into its record (Ongoing), before anything
// is written to them (Kafka's AddPartitionsToTxn).
func (c *txnCoordinator) addPartitionsLocked(e *txnEntry, t *Txn, add []txn.Partition) error {
	m := e.meta
	m.Partitions = slices.Clone(m.Partitions)
	n := len(m.Partitions)
	for _, p := range add {
		if i, found := slices.BinarySearchFunc(m.Partitions, p, txn.Partition.Compare); !found {
			m.Partitions = slices.Insert(m.Partitions, i, p)
		}
	}
	if len(m.Partitions) == n && m.State == txn.Ongoing {
		return nil
	}
	if len(m.Partitions) == 0 {
		return nil
	}
	now := c.s.opts.Now()
	if m.State != txn.Ongoing {
		m.Start = t.start
	}
	m.State, m.LastUpdate = txn.Ongoing, now
	if err := c.writeState(e, m, false); err != nil {
		return err
	}
	e.meta = m
	return nil
}

// syncMarkersLocked makes the markers of the id's transactions durable
// (see txnEntry.markers): an fsync of each partition whose synced offset
// is not past its marker yet. A partition the next transaction wrote to
// needs none: its records follow the marker, and were made durable before
// its decision. A marker in a partition deleted since needs none either.
// The caller holds e's sem.
func (c *txnCoordinator) syncMarkersLocked(e *txnEntry) error {
	e.markers = slices.DeleteFunc(e.markers, txnMarker.synced)
	if len(e.markers) == 0 {
		return nil
	}
	err := forEach(len(e.markers), true, func(i int) error {
		mk := e.markers[i]
		err := mk.p.SyncTo(mk.offset + 1)
		if err != nil && errors.Is(err, partition.ErrClosed) {
			if p, perr := c.partition(mk.tp); perr == nil && p != mk.p {
				return nil // deleted: the marker is gone with its partition
			}
		}
		return err
	})
	if err == nil {
		e.markers = e.markers[:0]
	}
	return err
}

// synced reports whether the marker is durable.
func (mk txnMarker) synced() bool { return mk.p.SyncedOffset() > mk.offset }

// appendBatches appends recs to p's partition as transactional batches of
// t's producer: one, unless they do not fit the topic's MaxBatchBytes,
// when they are split.
func (c *txnCoordinator) appendBatches(t *Txn, p *txnPart, recs []Record) error {
	part, err := p.t.Partition(p.part)
	if err != nil {
		return err
	}
	cfg := part.Config()
	_, _, err = part.AppendProduced(recs, partition.ProducerBatch{ID: t.pid, Epoch: t.epoch, Seq: p.seq, Transactional: true}, cfg.Compression, cfg.CompressionLevel)
	if errors.Is(err, ErrBatchTooLarge) && len(recs) > 1 {
		half := len(recs) / 2
		if err := c.appendBatches(t, p, recs[:half]); err != nil {
			return err
		}
		return c.appendBatches(t, p, recs[half:])
	}
	if err != nil {
		return c.s.goneErr(p.t, p.part, err)
	}
	p.seq = log.IncrementSequence(p.seq, int32(len(recs)))
	t.batches.Add(1)
	return nil
}

// syncParts makes what was appended to the partitions durable, as their
// flush policies allow: an fsync each under SyncEvery (concurrent callers
// share them), none under SyncNever, and none under SyncAlways, whose
// appends returned once durable.
func (c *txnCoordinator) syncParts(parts []txn.Partition) error {
	return forEach(len(parts), c.anyWaitsForSync(parts, partition.SyncModeEvery), func(i int) error {
		p, err := c.partition(parts[i])
		if err != nil || p == nil || p.Config().Sync.Mode != partition.SyncModeEvery {
			return err
		}
		return p.Sync()
	})
}

// partition returns the partition p names, or nil if its topic or
// partition no longer exists (deleted since).
func (c *txnCoordinator) partition(p txn.Partition) (*partition.Partition, error) {
	t, err := c.s.internalTopic(p.Topic)
	if errors.Is(err, ErrUnknownTopic) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	part, err := t.Partition(int(p.Partition))
	if errors.Is(err, ErrUnknownPartition) {
		return nil, nil
	}
	return part, err
}

// completeLocked ends the id's transaction: it writes PrepareCommit
// (commit set; durably: the decision) or PrepareAbort, then a marker of
// the id's producer at its epoch to every partition of the transaction,
// then CompleteCommit or CompleteAbort. A failure leaves the id in its
// Prepare state, which the next Open completes. The caller holds e's sem.
func (c *txnCoordinator) completeLocked(e *txnEntry, commit bool) error {
	if commit {
		if err := c.syncMarkersLocked(e); err != nil {
			return err
		}
	}
	m := e.meta
	m.State, m.LastUpdate = txn.PrepareAbort, c.s.opts.Now()
	if commit {
		m.State = txn.PrepareCommit
	}
	// An abort needs no fsync: a transaction whose abort is lost is found
	// open at the next Open, and aborted then. Nor do the last
	// transaction's markers need to be durable before it: Open decides by
	// the last PrepareCommit or CompleteCommit record, which a
	// PrepareAbort does not replace.
	if err := c.writeState(e, m, commit); err != nil {
		if commit {
			return fmt.Errorf("strata: transaction %q could not be committed, and is aborted at the next Open: %w", e.id, err)
		}
		return err
	}
	e.meta = m
	return c.finishLocked(e)
}

// finishLocked writes the markers of the id's Prepare state and its
// Complete state. It does not wait for the markers to be durable: the
// outcome is decided (a PrepareCommit is durable; a transaction not
// committed is aborted), and Open writes a marker a crash lost again.
// The caller holds e's sem.
func (c *txnCoordinator) finishLocked(e *txnEntry) error {
	m := e.meta
	commit := m.State == txn.PrepareCommit
	markers, err := c.writeMarkers(m, commit, true)
	e.markers = append(e.markers, markers...)
	if err != nil {
		if commit {
			return fmt.Errorf("strata: transaction %q is committed, but not every marker was written; the next Open writes them: %w", e.id, err)
		}
		return err
	}
	m.State, m.LastUpdate = txn.CompleteAbort, c.s.opts.Now()
	if commit {
		m.State = txn.CompleteCommit
	}
	m.Partitions = nil
	if err := c.writeState(e, m, false); err != nil {
		if commit {
			return fmt.Errorf("strata: transaction %q is committed, but its completion was not recorded: %w", e.id, err)
		}
		return err
	}
	e.meta = m
	return nil
}

// writeMarkers writes the COMMIT (commit set) or ABORT marker of m's
// producer to each of m's partitions: in __consumer_offsets through the
// group coordinator, which applies it to the offsets the transaction
// committed. With decided the outcome is recorded (see finishLocked) and
// the markers are partition.WriteDecidedMarker's: not waited for durable.
// It returns the markers written.
func (c *txnCoordinator) writeMarkers(m txn.Metadata, commit, decided bool) ([]txnMarker, error) {
	out := make([]txnMarker, len(m.Partitions))
	parallel := !decided && c.anyWaitsForSync(m.Partitions, partition.SyncModeAlways)
	err := forEach(len(m.Partitions), parallel, func(i int) error {
		tp := m.Partitions[i]
		p, err := c.partition(tp)
		if err != nil || p == nil {
			return err
		}
		var off int64
		switch {
		case decided:
			off, err = p.WriteDecidedMarker(m.ProducerID, m.ProducerEpoch, commit, markerCoordinatorEpoch)
			if err == nil && tp.Topic == ConsumerOffsetsTopic {
				c.s.groups.CompleteTxn(m.ProducerID, commit)
			}
		case tp.Topic == ConsumerOffsetsTopic:
			off, err = c.s.endTxnOffsets(m.ProducerID, m.ProducerEpoch, commit)
		default:
			off, err = p.WriteMarker(m.ProducerID, m.ProducerEpoch, commit, markerCoordinatorEpoch)
		}
		if errors.Is(err, ErrProducerFenced) {
			// The partition holds a later epoch of the producer: it
			// has this transaction's marker already (the id's next
			// transaction writes to a partition only after the last
			// one's markers, and a later record there makes the marker
			// durable with it), which a crash kept while it lost the
			// Complete record.
			c.s.opts.Logger.Info("strata: a transaction's partition is past it already", "topic", tp.Topic, "partition", tp.Partition,
				"producer_id", m.ProducerID, "epoch", m.ProducerEpoch, "err", err)
			return nil
		}
		if err == nil {
			out[i] = txnMarker{tp: tp, p: p, offset: off}
		}
		return err
	})
	return slices.DeleteFunc(out, func(mk txnMarker) bool { return mk.p == nil }), err
}

// writeState appends the id's record m to TransactionStateTopic (creating
// the topic at its first record), fsynced if sync is set and the store's
// flush policy is not SyncNever. While the topic is cleaned, the id's
// markers are made durable first (see compactLog). The caller holds e's
// sem.
func (c *txnCoordinator) writeState(e *txnEntry, m txn.Metadata, sync bool) error {
	if c.compactingLog() {
		if err := c.syncMarkersLocked(e); err != nil {
			return err
		}
	}
	p, err := c.logPartition()
	if err != nil {
		return err
	}
	rec := Record{Key: txn.AppendKey(nil, e.id), Value: txn.AppendValue(nil, m)}
	off, err := p.Append([]Record{rec})
	if err != nil {
		return err
	}
	if sync {
		return p.SyncTo(off + 1)
	}
	return nil
}

// logPartition returns the partition of TransactionStateTopic, creating
// the topic if the store has none yet.
func (c *txnCoordinator) logPartition() (*partition.Partition, error) {
	t, err := c.s.internalTopic(TransactionStateTopic)
	if errors.Is(err, ErrUnknownTopic) {
		cfg := c.logConfig
		cfg.Sync = c.s.txnLogSync()
		err = c.s.createTopic(TransactionStateTopic, cfg)
		if err == nil || errors.Is(err, ErrTopicExists) {
			var err2 error
			if t, err2 = c.s.internalTopic(TransactionStateTopic); err2 == nil {
				err = nil
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return t.Partition(0)
}

// txnLogSync is the flush policy of TransactionStateTopic: none under
// SyncNever; otherwise SyncEvery (at the store's interval), since the
// coordinator fsyncs the one record that must be durable (the decision
// to commit) itself, and the others need not be.
func (s *Store) txnLogSync() SyncPolicy {
	switch s.opts.Sync.Mode {
	case partition.SyncModeNever:
		return SyncNever
	case partition.SyncModeEvery:
		if s.opts.Sync.Interval > 0 {
			return s.opts.Sync
		}
	}
	// Not SyncEvery(0), which is the zero policy: "the store's".
	return SyncEvery(partition.DefaultSyncInterval)
}

// forEach calls fn for 0 to n-1 and returns their errors joined: several
// at a time if parallel (the calls wait for fsyncs), one after the other
// otherwise (they only copy bytes to the OS, which goroutines would not
// make faster).
func forEach(n int, parallel bool, fn func(i int) error) error {
	if n == 1 || !parallel {
		var errs []error
		for i := range n {
			errs = append(errs, fn(i))
		}
		return errors.Join(errs...)
	}
	const workers = 16
	errs := make([]error, n)
	var (
		wg   sync.WaitGroup
		next = make(chan int)
	)
	for range min(n, workers) {
		wg.Go(func() {
			for i := range next {
				errs[i] = fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// waitsForSync reports whether the partition's flush policy is mode (an
// append waits for its fsync under SyncAlways; Sync fsyncs under
// SyncEvery, while under SyncAlways appends did already).
func (c *txnCoordinator) waitsForSync(topicName string, part int, mode partition.SyncMode) bool {
	p, err := c.partition(txn.Partition{Topic: topicName, Partition: int32(part)})
	return err == nil && p != nil && p.Config().Sync.Mode == mode
}

// anyWaitsForSync is waitsForSync for any of parts.
func (c *txnCoordinator) anyWaitsForSync(parts []txn.Partition, mode partition.SyncMode) bool {
	for _, p := range parts {
		if c.waitsForSync(p.Topic, int(p.Partition), mode) {
			return true
		}
	}
	return false
}

// compactLog runs clean, a cleaning of TransactionStateTopic, once every
// marker whose transaction a record it could remove decides is durable:
// the cleaning keeps only each id's last record, and a crash that lost a
// marker after it would find nothing to end the transaction by. The
// markers of every id are made durable first, and while clean runs each
// record written waits for its id's (writeState), so that the records a
// cleaning takes away, all written before it ends, decide nothing a
// marker still needs.
func (c *txnCoordinator) compactLog(clean func() error) error {
	c.mu.Lock()
	c.compacting++
	entries := slices.Collect(maps.Values(c.ids))
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.compacting--
		c.mu.Unlock()
	}()
	for _, e := range entries {
		_ = e.lock(context.Background())
		err := c.syncMarkersLocked(e)
		e.unlock()
		if err != nil {
			return fmt.Errorf("strata: compacting %s: %w", TransactionStateTopic, err)
		}
	}
	return clean()
}

// compactingLog reports whether a cleaning of TransactionStateTopic is
// under way.
func (c *txnCoordinator) compactingLog() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.compacting > 0
}
