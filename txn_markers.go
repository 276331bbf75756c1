package strata

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/txn"
)

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
