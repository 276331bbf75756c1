package strata

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/txn"
)

// initTxns starts the transaction coordinator and, once the store has a
// TransactionStateTopic, replays it: the last record of each transactional
// id is its state. Then it finishes what a crash or a Close left: a
// transaction decided (PrepareCommit, PrepareAbort) gets its markers and
// its Complete record, one left Ongoing is aborted. After a crash (clean
// false) it also ends the transactions the partitions hold open that no
// record accounts for (see sweep). It runs after initGroups, whose
// replay left the offsets of open transactions pending.
//
// After a clean shutdown it reads nothing, unless a partition holds a
// transaction open (a store Close did not end, or one Kafka wrote): Close
// ended every transaction, so there is nothing to finish, and the replay
// waits for the first call that needs the ids' states (see load).
func (s *Store) initTxns(clean bool) error {
	c := newTxnCoordinator(s)
	s.txns = c
	t, ok := (*s.topics.Load())[TransactionStateTopic]
	if !ok {
		if clean {
			return nil
		}
		return c.sweep()
	}
	if clean && !s.txnOpenInPartitions() {
		c.deferred = t
		c.loaded.Store(false)
		return nil
	}
	return c.load(t, clean)
}

// txnOpenInPartitions reports whether a partition of the store holds a
// transaction not ended, or ended by a marker readers do not see yet.
func (s *Store) txnOpenInPartitions() bool {
	for _, t := range *s.topics.Load() {
		for _, p := range t.Partitions() {
			if p.LastStableOffset() < p.HighWatermark() {
				return true
			}
		}
	}
	return false
}

// load replays TransactionStateTopic t into c and finishes what the
// records say is unfinished (see initTxns); after a crash (clean false),
// it sweeps the partitions first.
func (c *txnCoordinator) load(t *topic.Topic, clean bool) error {
	s := c.s
	err := c.replay(t)
	if errors.Is(err, ErrCorrupt) {
		s.opts.Logger.Error("strata: "+TransactionStateTopic+" is damaged; recovering it and replaying it again", "err", err)
		if c.deferred != nil {
			s.mu.Lock() // the store is open: others read the topics
		}
		t, err = s.reopenRecovered(t)
		if c.deferred != nil {
			s.mu.Unlock()
		}
		if err != nil {
			return err
		}
		c.ids = map[string]*txnEntry{}
		err = c.replay(t)
		clean = false // the lost records' transactions are found by the sweep
	}
	if err != nil {
		return err
	}
	if !clean {
		// First, so that the markers below (at newer epochs) cannot end
		// an older transaction whose own marker a crash lost.
		if err := c.sweep(); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(c.ids)) {
		e := c.ids[id]
		var err error
		_ = e.lock(context.Background())
		switch e.meta.State {
		case txn.Ongoing:
			// Open when the store stopped: aborted, at a new epoch.
			e.meta.ProducerEpoch = min(e.meta.ProducerEpoch+1, math.MaxInt16-1)
			err = c.completeLocked(e, false)
		case txn.PrepareCommit, txn.PrepareAbort:
			err = c.finishLocked(e)
		}
		if err == nil {
			// Open leaves no marker to a later fsync: the partitions
			// it reopens hold no transaction open past their last
			// stable offset.
			err = c.syncMarkersLocked(e)
		}
		e.unlock()
		if err != nil {
			return fmt.Errorf("strata: completing transaction %q: %w", id, err)
		}
	}
	return nil
}

// replay reads the records of TransactionStateTopic t into c, up to the
// first damaged batch (ErrCorrupt).
func (c *txnCoordinator) replay(t *topic.Topic) error {
	p := t.Partitions()[0]
	rd := p.NewReader(p.StartOffset())
	defer rd.Close()
	var r Record
	for {
		ok, err := rd.Next(&r)
		if err != nil {
			return fmt.Errorf("strata: replaying %s: %w", TransactionStateTopic, err)
		}
		if !ok {
			return nil
		}
		id, m, deleted, err := txn.Decode(r.Key, r.Value)
		switch {
		case errors.Is(err, txn.ErrNotTxnRecord):
			continue
		case err != nil:
			c.s.opts.Logger.Warn("strata: skipping a damaged transaction state record", "offset", r.Offset, "err", err)
			continue
		case deleted:
			delete(c.ids, id)
			continue
		}
		e := c.entry(id)
		e.meta = m
		switch {
		case m.State == txn.PrepareCommit || m.State == txn.CompleteCommit:
			e.committedPID, e.committedEpoch = m.ProducerID, m.ProducerEpoch
		case m.State == txn.Ongoing && m.ProducerID == e.committedPID && m.ProducerEpoch == e.committedEpoch:
			// A TxnProducer's next transaction at the epoch of its
			// last commit (whose markers were made durable before this
			// record): what the partitions hold open at that epoch is
			// this one's, not committed.
			e.committedPID = -1
		}
	}
}

// sweep ends the transactions that the partitions hold open after a
// crash, before the state records are acted on: a power loss can keep
// the records a transaction wrote and lose the Ongoing record that listed
// their partition, or keep a later record of the id and lose a marker. A
// producer's open transaction is committed if its transactional id's last
// PrepareCommit or CompleteCommit record is at the same producer id and
// epoch with no Ongoing record at that epoch after it (a Txn has an epoch
// of its own; a TxnProducer keeps its epoch, and unless the store's
// policy is SyncNever, the Ongoing record of its next transaction at that
// epoch is fsynced before the transaction writes; a transaction is
// decided once its PrepareCommit is durable), and aborted otherwise, at
// an epoch no older than the partition's. The id's epoch is raised to
// the newest any partition holds of its producer id, so that its next
// transaction's epoch is new to every partition: the other Ongoing
// records and the PrepareAbort records are not fsynced, and the batches
// and markers of an aborted transaction (or of one committed in one
// phase) can outlive them.
func (c *txnCoordinator) sweep() error {
	owners := map[int64]*txnEntry{}
	for _, e := range c.ids {
		if e.meta.ProducerID >= 0 {
			owners[e.meta.ProducerID] = e
		}
		if e.committedPID >= 0 {
			owners[e.committedPID] = e
		}
	}
	// The ids' epochs are raised once every decision is taken, on the
	// states as the records left them.
	raise := map[*txnEntry]int16{}
	defer func() {
		for e, epoch := range raise {
			e.meta.ProducerEpoch = max(e.meta.ProducerEpoch, epoch)
		}
	}()
	var errs []error
	for name, t := range *c.s.topics.Load() {
		if name == TransactionStateTopic {
			continue
		}
		for i, p := range t.Partitions() {
			for _, info := range p.Producers() {
				if e := owners[info.ID]; e != nil && e.meta.ProducerID == info.ID {
					// The records of a transaction the crash kept at an
					// epoch its lost records had: the next one takes a
					// newer epoch, which the partition accepts from 0.
					raise[e] = max(raise[e], info.Epoch)
				}
				if info.TxnFirstOffset < 0 {
					continue
				}
				e := owners[info.ID]
				commit := e != nil && e.committedPID == info.ID && e.committedEpoch == info.Epoch
				epoch := info.Epoch
				if e != nil && !commit {
					epoch = max(epoch, e.meta.ProducerEpoch)
					raise[e] = max(raise[e], epoch)
				}
				c.s.opts.Logger.Warn("strata: ending a transaction a crash left open in a partition", "topic", name, "partition", i,
					"producer_id", info.ID, "epoch", epoch, "first_offset", info.TxnFirstOffset, "commit", commit)
				var (
					off int64
					err error
				)
				if name == ConsumerOffsetsTopic {
					off, err = c.s.endTxnOffsets(info.ID, epoch, commit)
				} else {
					off, err = p.WriteMarker(info.ID, epoch, commit, 0)
				}
				if err == nil && e != nil {
					e.markers = append(e.markers, txnMarker{tp: txn.Partition{Topic: name, Partition: int32(i)}, p: p, offset: off})
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("strata: ending the transaction of producer %d in %s-%d: %w", info.ID, name, i, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}
