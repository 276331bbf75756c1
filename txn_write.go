package strata

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/txn"
)

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
	// A TxnProducer's transaction at the epoch of its last commit (a
	// Txn has an epoch of its own; BeginTxn set it in e.meta already) is
	// told apart from it at Open by its Ongoing record, which takes the
	// commit's place (see replay): the commit's markers are made durable
	// before it, and it before the transaction's first batch.
	sync := false
	if m.State != txn.Ongoing {
		m.Start = t.start
		sync = t.wire && (m.State == txn.CompleteCommit || m.State == txn.PrepareCommit) && m.ProducerID == t.pid && m.ProducerEpoch == t.epoch
		if sync {
			if err := c.syncMarkersLocked(e); err != nil {
				return err
			}
		}
	}
	m.State, m.LastUpdate = txn.Ongoing, now
	if err := c.writeState(e, m, sync); err != nil {
		return err
	}
	e.meta = m
	return nil
}

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
