package partition

import (
	"sync"
	"time"
)

// background is a partition's work off the appenders' path: the fsync of
// the segments a roll sealed, soon after the roll, and under SyncEvery the
// fsync of everything appended, within Interval of its append. A partition
// has no goroutine of its own for it: a roll starts one that flushes and
// exits, and SyncEvery's interval is a timer (time.AfterFunc) that runs
// while records wait for it and stops when none do, so that an idle
// partition costs nothing and Open starts no goroutine (starting one wakes
// another thread, which costs more than the rest of a clean Open).
//
// testing/synctest: the timer is made by Open, so it runs on the clock of
// where Open ran, and only an append or its own run resets it (Reset keeps
// a timer's clock). A store opened outside a bubble and written inside one
// keeps a timer on the real clock, whose runs happen outside the bubble,
// and leaves nothing in the bubble that waits on something made outside
// it; a roll inside the bubble starts its flush goroutine there, which
// waits only on mutexes, does its I/O and ends. Close waits for a flush or
// a run under way through mutexes (never a channel or a WaitGroup, which a
// bubble claims), so it may be called outside the bubble that wrote. A
// partition opened inside a bubble has its timer on the bubble's clock and
// is to be written and closed inside it.
type background struct {
	// flush is held from the roll that starts a flush goroutine until the
	// goroutine ends (mu.flushing says so), and by Close for good: Close
	// waits for the goroutine by taking it.
	flush sync.Mutex

	tickMu  sync.Mutex  // held by a run of tick; guards stopped
	tick    *time.Timer // SyncEvery's, made by Open; nil under the other policies
	stopped bool        // Close stopped tick: a late run does nothing
}

// startBackground arms, under SyncEvery, the timer that fsyncs what is
// appended within the interval; the first run finds nothing to do if
// nothing was appended since Open, and disarms it until the next append.
// Under the other policies nothing is armed.
func (p *Partition) startBackground() {
	if p.cfg.Sync.Mode != SyncModeEvery {
		return
	}
	p.mu.ticking = true
	p.bg.tick = time.AfterFunc(p.cfg.Sync.Interval, p.runTick)
}

// tickMuLocked arms SyncEvery's timer again for an append made while it
// was idle: the append is durable within the interval. The caller holds
// mu.
func (p *Partition) tickMuLocked() {
	if p.mu.closed || p.mu.bgFailed {
		return
	}
	p.mu.ticking = true
	p.bg.tick.Reset(p.cfg.Sync.Interval)
}

// runTick is SyncEvery's timer's run: it fsyncs everything appended, then
// arms the timer again, an interval after this run began, if more was
// appended meanwhile, or leaves it idle until the next append. A failed
// fsync is logged and ends the partition's background fsyncs (the
// partition is closed to appends).
func (p *Partition) runTick() {
	p.bg.tickMu.Lock()
	defer p.bg.tickMu.Unlock()
	if p.bg.stopped {
		return
	}
	began := time.Now()
	err := p.syncTo(p.end.Load())
	p.mu.Lock()
	switch {
	case err != nil:
		p.mu.ticking, p.mu.bgFailed = false, true
	case p.mu.closed || p.end.Load() <= p.synced.Load():
		p.mu.ticking = false
	default:
		p.bg.tick.Reset(max(p.cfg.Sync.Interval-time.Since(began), 0))
	}
	p.mu.Unlock()
	if err != nil {
		p.logBackgroundFailure(err)
	}
}

// flushRolledMuLocked has the segments that rolls sealed fsynced soon,
// outside mu: unless a flush goroutine runs already (it takes what this
// roll left before it ends), it starts one. The caller holds mu.
func (p *Partition) flushRolledMuLocked() {
	if p.mu.flushing || p.mu.closed || p.mu.bgFailed {
		return
	}
	p.mu.flushing = true
	p.bg.flush.Lock() // free: the last flush goroutine unlocked it with mu held
	go p.flushRolled()
}

// flushRolled fsyncs the sealed segments waiting for it and checkpoints the
// recovery point past them, until a look under mu finds none left, then
// ends. A failed fsync is logged and ends the partition's background
// fsyncs (the partition is closed to appends).
func (p *Partition) flushRolled() {
	for {
		p.syncMu.Lock()
		err := p.flushPendingSyncMuLocked()
		p.syncMu.Unlock()
		p.mu.Lock()
		if err != nil {
			p.mu.bgFailed = true
		}
		if err != nil || p.mu.closed || len(p.mu.pending) == 0 {
			p.mu.flushing = false
			p.bg.flush.Unlock()
			p.mu.Unlock()
			if err != nil {
				p.logBackgroundFailure(err)
			}
			return
		}
		p.mu.Unlock()
	}
}

// logBackgroundFailure logs a failed background fsync; none runs after it.
func (p *Partition) logBackgroundFailure(err error) {
	p.cfg.Logger.Error("partition: background fsync failed", "dir", p.dir, "err", err)
}

// stopBackground stops SyncEvery's timer and waits for a run of it or for a
// flush goroutine under way. Close calls it once it has marked the
// partition closed, so that no roll starts another flush.
func (p *Partition) stopBackground() {
	if p.bg.tick != nil {
		p.bg.tickMu.Lock()
		p.bg.stopped = true
		p.bg.tick.Stop()
		p.bg.tickMu.Unlock()
	}
	p.bg.flush.Lock() // kept: a closed partition rolls no more
}
