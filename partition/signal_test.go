package partition

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSignalBroadcastWithoutWaiters checks that a broadcast nobody waits
// for takes no lock (it returns while the lock is held elsewhere), and that
// a waiter's channel is still closed by the next broadcast.
func TestSignalBroadcastWithoutWaiters(t *testing.T) {
	var s signal
	s.mu.Lock()
	s.broadcast() // blocks forever if it takes the lock
	s.mu.Unlock()

	ch := s.wait()
	require.Equal(t, ch, s.wait(), "waiters before a broadcast share a channel")
	select {
	case <-ch:
		t.Fatal("closed before a broadcast")
	default:
	}
	s.broadcast()
	select {
	case <-ch:
	default:
		t.Fatal("a broadcast did not close the waiter's channel")
	}
	next := s.wait()
	require.NotEqual(t, ch, next, "a wait after a broadcast gets a new channel")
	s.broadcast()
	<-next
	s.mu.Lock()
	s.broadcast()
	s.mu.Unlock()
}
