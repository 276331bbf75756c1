package partition

import "fmt"

// Sync makes every record appended so far durable: it fsyncs the segments
// sealed by rolls whose background fsync has not run yet, then the active
// segment. Concurrent callers share one fsync. A failed fsync closes the
// partition to appends.
func (p *Partition) Sync() error {
	if err := p.checkOpen(); err != nil {
		return err
	}
	if p.cfg.ReadOnly {
		return p.readOnlyError()
	}
	return p.syncTo(p.end.Load())
}

// SyncTo makes every record below offset durable, as Sync does, for a
// caller that needs only its own records on stable storage (those up to
// the offset its append returned): concurrent callers share fsyncs, and a
// caller that an fsync under way covers waits for it and for no other.
// Records past the end are not waited for: an offset past EndOffset is
// Sync. A negative offset is ErrOutOfRange.
func (p *Partition) SyncTo(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("partition: sync of %s below offset %d, which is below 0: %w", p.name, offset, ErrOutOfRange)
	}
	if err := p.checkOpen(); err != nil {
		return err
	}
	if p.cfg.ReadOnly {
		return p.readOnlyError()
	}
	return p.syncTo(offset)
}

// syncTo returns once every offset below target is durable: group commit.
// One caller at a time (the leader) fsyncs, covering everything appended
// when it starts; the others wait for that fsync to end, all woken at once,
// and return if it covered them. Whoever it did not cover (they appended
// during it) elects the next leader among themselves, so each fsync covers
// everything appended while the previous one ran.
func (p *Partition) syncTo(target int64) error {
	g := &p.group
	for {
		// A truncation may have lowered the end below target: what is
		// gone needs no fsync.
		target = min(target, p.end.Load())
		if p.synced.Load() >= target {
			return nil
		}
		g.mu.Lock()
		if p.synced.Load() >= target {
			g.mu.Unlock()
			return nil
		}
		if g.running {
			for gen := g.gen; g.running && g.gen == gen; {
				g.cond.Wait()
			}
			g.mu.Unlock()
			continue
		}
		g.running = true
		g.mu.Unlock()

		err := p.syncOnce()

		g.mu.Lock()
		g.running = false
		g.gen++
		g.cond.Broadcast()
		g.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// syncOnce fsyncs the sealed segments awaiting it and the active segment's
// log, and moves the synced offset to the end offset as it was before. The
// pending segments, the active one and the end offset are taken together,
// so that a roll in between cannot leave a sealed segment unsynced below
// the synced offset.
func (p *Partition) syncOnce() error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	p.mu.Lock()
	if p.mu.failed != nil {
		err := p.mu.failed
		p.mu.Unlock()
		return fmt.Errorf("partition: sync of %s: %w: %w", p.name, ErrClosed, err)
	}
	pending, snaps := p.mu.pending, p.mu.pendingSnaps
	p.mu.pending, p.mu.pendingSnaps = nil, nil
	active, covered := p.mu.active, p.end.Load()
	ok := active.acquire()
	p.mu.Unlock()
	if !ok {
		releaseAll(pending)
		return fmt.Errorf("partition: sync of %s: %w", p.name, ErrClosed)
	}
	defer func() { _ = active.release() }()
	if err := p.flushSealedSyncMuLocked(pending, snaps, active.seg.Base()); err != nil {
		return err
	}
	// The .log needs the fsync, and the .txnindex if a transaction aborted
	// since the last one (recovery cannot rebuild it from this segment
	// alone); the active segment's offset and time indexes are rebuilt by
	// recovery after a crash, and its roll syncs them.
	err := active.seg.SyncLog()
	if err == nil {
		err = active.seg.SyncTxnIndex()
	}
	p.countFsync()
	if err != nil {
		return p.fail(fmt.Errorf("fsync failed, unsynced records may be lost: %w", err))
	}
	p.publishSynced(covered)
	return nil
}

// flushPendingSyncMuLocked fsyncs the segments that rolls sealed since the
// last flush and checkpoints the recovery point. The caller holds syncMu;
// it takes mu for a moment to take the pending list.
func (p *Partition) flushPendingSyncMuLocked() error {
	p.mu.Lock()
	pending, snaps := p.mu.pending, p.mu.pendingSnaps
	p.mu.pending, p.mu.pendingSnaps = nil, nil
	rp := p.mu.active.seg.Base()
	p.mu.Unlock()
	return p.flushSealedSyncMuLocked(pending, snaps, rp)
}

// flushSealedSyncMuLocked fsyncs pending (data and trimmed indexes),
// releases them, writes the producer state snapshots taken at their rolls
// (snaps), then checkpoints the recovery point rp: the base of the
// active segment when they were taken, below which everything is on stable
// storage. A failed fsync closes the partition to appends. A checkpoint
// that cannot be written does not: it stays due (see
// checkpointSyncMuLocked). The caller holds syncMu.
func (p *Partition) flushSealedSyncMuLocked(pending []*segRef, snaps []pendingSnapshot, rp int64) error {
	var err error
	for _, r := range pending {
		if err == nil {
			err = r.seg.Sync()
			p.countFsync()
		}
		_ = r.release()
	}
	if err != nil {
		return p.fail(fmt.Errorf("fsync of a rolled segment failed: %w", err))
	}
	p.writeSnapshotsSyncMuLocked(snaps)
	if len(pending) > 0 {
		p.publishSynced(rp)
		p.checkpoint.set(rp)
	}
	p.checkpointSyncMuLocked()
	return nil
}

// countFsync counts an fsync of appended data in the stats; under
// SyncNever the file system's Sync does nothing, and nothing is counted.
func (p *Partition) countFsync() {
	if p.cfg.Sync.Mode != SyncModeNever {
		p.stats.fsyncs.Add(1)
	}
}

// releaseAll drops a reference on each of refs.
func releaseAll(refs []*segRef) {
	for _, r := range refs {
		_ = r.release()
	}
}

// fail closes the partition to appends after a failed fsync or roll.
func (p *Partition) fail(err error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failMuLocked(err)
}
