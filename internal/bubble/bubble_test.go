package bubble

import (
	"runtime"
	"testing"
	"testing/synctest"
)

// TestGoroutines counts a bubble's goroutines as they start and end, and
// none outside it.
func TestGoroutines(t *testing.T) {
	if n := Goroutines(); n != -1 {
		t.Fatalf("outside a bubble: %d, want -1", n)
	}
	outside := make(chan struct{})
	for range 5 {
		go func() { <-outside }() // not the bubble's
	}
	defer close(outside)
	synctest.Test(t, func(t *testing.T) {
		base := Goroutines()
		if base < 1 || base+5 > runtime.NumGoroutine() {
			t.Fatalf("the bubble's goroutines at its start: %d of the process's %d, five of which are outside it", base, runtime.NumGoroutine())
		}
		stop := make(chan struct{})
		for range 3 {
			go func() { <-stop }()
		}
		synctest.Wait()
		if n := Goroutines(); n != base+3 {
			t.Fatalf("with three more: %d, want %d", n, base+3)
		}
		close(stop)
		synctest.Wait()
		if n := Goroutines(); n != base {
			t.Fatalf("after they ended: %d, want %d", n, base)
		}
	})
}
