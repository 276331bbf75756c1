package strata_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// loops runs functions in goroutines, each over and over until the
// loops are stopped or it fails.
type loops struct {
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

func newLoops() *loops { return &loops{stop: make(chan struct{})} }

// run calls f(0), f(1), … in a goroutine until wait stops it or f fails;
// f's error, named, is one of wait's.
func (l *loops) run(name string, f func(i int) error) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				return
			default:
			}
			if err := f(i); err != nil {
				l.mu.Lock()
				l.errs = append(l.errs, fmt.Errorf("%s: %w", name, err))
				l.mu.Unlock()
				return
			}
		}
	}()
}

// wait stops the loops, waits for them to return and returns their
// errors.
func (l *loops) wait() error {
	close(l.stop)
	l.wg.Wait()
	return errors.Join(l.errs...)
}

// waitProgress waits, up to a deadline, until n has counted by more
// events, done by other goroutines, than when it was called.
func waitProgress(t *testing.T, n *atomic.Int64, by int64) {
	t.Helper()
	want := n.Load() + by
	deadline := time.Now().Add(30 * time.Second)
	for n.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("%d events of %d after 30 s", n.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
}
