package strata

import (
	"sync"
	"time"
)

// background runs the store's periodic jobs (retention, cleaning) from
// timers (time.AfterFunc), each set again when its run ends, rather than
// from a goroutine that waits on tickers: until a job is due the store has
// no goroutine of its own, which in a process's first Open costs more than
// the rest of the store's work. The jobs never run at once.
type background struct {
	jobs sync.Mutex // held by a job while it runs

	mu      sync.Mutex // guards timers and stopped
	timers  []*time.Timer
	stopped bool
	running sync.WaitGroup // the runs under way
}

// every runs job every d (from the end of one run to the start of the
// next), until stop; a d of zero or less never runs it.
func (b *background) every(d time.Duration, job func()) {
	if d <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		b.mu.Lock()
		if b.stopped {
			b.mu.Unlock()
			return
		}
		b.running.Add(1)
		b.mu.Unlock()
		defer b.running.Done()
		b.jobs.Lock()
		job()
		b.jobs.Unlock()
		b.mu.Lock()
		if !b.stopped {
			t.Reset(d)
		}
		b.mu.Unlock()
	})
	b.timers = append(b.timers, t)
}

// stop stops the timers and waits for the runs under way. A timer that
// fires after it runs nothing.
func (b *background) stop() {
	b.mu.Lock()
	b.stopped = true
	for _, t := range b.timers {
		t.Stop()
	}
	b.mu.Unlock()
	b.running.Wait()
}
