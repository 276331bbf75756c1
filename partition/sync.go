package partition

import (
	"fmt"
	"time"
)

// Sync makes every record appended so far durable (fsync of the active
// segment; earlier segments were fsynced when they rolled). Concurrent
// callers share one fsync. A failed fsync closes the partition to appends.
func (p *Partition) Sync() error {
	if err := p.checkOpen(); err != nil {
		return err
	}
	return p.syncTo(p.end.Load())
}

// syncTo returns once every offset below target is durable. Callers queue on
// syncMu; whoever gets it fsyncs everything appended so far, so the callers
// behind it usually find their target covered and return at once: that is
// group commit.
func (p *Partition) syncTo(target int64) error {
	if p.synced.Load() >= target {
		return nil
	}
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if p.synced.Load() >= target {
		return nil
	}
	p.mu.Lock()
	if p.mu.failed != nil {
		err := p.mu.failed
		p.mu.Unlock()
		return fmt.Errorf("partition: sync of %s: %w: %w", p.dir, ErrClosed, err)
	}
	active, covered := p.mu.active, p.end.Load()
	ok := active.acquire()
	p.mu.Unlock()
	if !ok {
		return fmt.Errorf("partition: sync of %s: %w", p.dir, ErrClosed)
	}
	// Only the .log needs the fsync: the active segment's indexes are rebuilt
	// by recovery after a crash, and a roll syncs them before the segment
	// stops being the last one.
	err := active.seg.SyncLog()
	_ = active.release()
	p.stats.fsyncs.Add(1)
	if err != nil {
		p.mu.Lock()
		if p.mu.failed == nil {
			p.mu.failed = fmt.Errorf("fsync failed, unsynced records may be lost: %w", err)
		}
		p.mu.Unlock()
		return fmt.Errorf("partition: sync of %s: %w: %w", p.dir, ErrClosed, err)
	}
	if p.synced.Load() < covered {
		p.synced.Store(covered)
	}
	return nil
}

// startFlusher starts the goroutine that fsyncs every Sync.Interval.
func (p *Partition) startFlusher() {
	p.flusherStop = make(chan struct{})
	p.flusherDone = make(chan struct{})
	go func() {
		defer close(p.flusherDone)
		t := time.NewTicker(p.cfg.Sync.Interval)
		defer t.Stop()
		for {
			select {
			case <-p.flusherStop:
				return
			case <-t.C:
				if err := p.syncTo(p.end.Load()); err != nil {
					p.cfg.Logger.Error("partition: background fsync failed", "dir", p.dir, "err", err)
					return
				}
			}
		}
	}()
}
