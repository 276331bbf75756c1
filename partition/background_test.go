package partition

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/internal/bubble"
)

// TestOpenStartsNoGoroutine: under each policy Open starts no goroutine
// and, but under SyncEvery, arms no timer; a roll's fsync runs on a
// goroutine that ends once it is done, and Close leaves nothing behind.
func TestOpenStartsNoGoroutine(t *testing.T) {
	for _, policy := range []SyncPolicy{SyncEvery(time.Second), SyncNever, SyncAlways} {
		t.Run(policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				before := bubble.Goroutines()
				cfg := small(newClock())
				cfg.Sync = policy
				p, _ := memPartition(t, cfg)
				require.Equal(t, before, bubble.Goroutines(), "goroutines after Open")
				require.Equal(t, policy.Mode == SyncModeEvery, p.bg.tick != nil, "a timer armed")

				for id := 0; len(p.Segments()) < 3; id++ {
					appendIDs(t, p, id)
				}
				synctest.Wait()
				require.Equal(t, before, bubble.Goroutines(), "goroutines once the rolls' fsyncs are done")
				p.mu.Lock()
				pending, flushing := len(p.mu.pending), p.mu.flushing
				p.mu.Unlock()
				require.Zero(t, pending, "sealed segments left unsynced")
				require.False(t, flushing)
				if policy.Mode != SyncModeNever {
					segs := p.Segments()
					require.GreaterOrEqual(t, p.SyncedOffset(), segs[len(segs)-1].Base, "synced past the rolled segments")
				}
				require.NoError(t, p.Close())
				require.Equal(t, before, bubble.Goroutines(), "goroutines after Close")
			})
		})
	}
}

// TestSyncEveryIdles: SyncEvery's timer runs while appended records wait
// for it and not after: an append made while it idles is durable one
// interval later, not sooner, and records appended during an interval are
// durable at its end.
func TestSyncEveryIdles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small(newClock())
		cfg.Sync = SyncEvery(time.Second)
		p, _ := memPartition(t, cfg)
		ticking := func() bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.mu.ticking
		}
		require.True(t, ticking(), "armed by Open")
		time.Sleep(1300 * time.Millisecond)
		synctest.Wait()
		require.False(t, ticking(), "idle once a run found nothing to fsync")

		appendIDs(t, p, 0)
		require.True(t, ticking(), "armed by the append")
		time.Sleep(time.Second - time.Nanosecond)
		synctest.Wait()
		require.Equal(t, int64(0), p.SyncedOffset(), "durable before the interval")
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		require.Equal(t, int64(1), p.SyncedOffset(), "durable at the interval")
		require.False(t, ticking())

		appendIDs(t, p, 1)
		time.Sleep(600 * time.Millisecond)
		appendIDs(t, p, 2)
		time.Sleep(400 * time.Millisecond)
		synctest.Wait()
		require.Equal(t, int64(3), p.SyncedOffset(), "both durable at the end of the interval")
		appendIDs(t, p, 3)
		require.True(t, ticking())
		require.NoError(t, p.Close())
		require.False(t, p.bg.tick.Stop(), "the timer is stopped by Close")
		time.Sleep(time.Hour)
		synctest.Wait()
	})
}

// TestWriteInABubbleToAPartitionOpenedOutside: a partition opened outside a
// testing/synctest bubble may be written inside one, and rolled there, and
// closed outside it after the bubble ended: SyncEvery's timer, armed again
// by an append in the bubble, stays the one Open made (a timer made in the
// bubble could not be stopped from outside it), and a roll's goroutine
// ends in the bubble.
func TestWriteInABubbleToAPartitionOpenedOutside(t *testing.T) {
	cfg := small(newClock())
	cfg.Sync = SyncEvery(time.Hour)
	p, _ := memPartition(t, cfg)
	p.runTick() // what the timer does after an hour of nothing appended
	require.False(t, p.mu.ticking)
	synctest.Test(t, func(t *testing.T) {
		for id := 0; len(p.Segments()) < 3; id++ {
			appendIDs(t, p, id)
		}
		require.True(t, p.mu.ticking)
		start := time.Now()
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, time.Minute, time.Since(start))
	})
	appendIDs(t, p, 1000)
	require.NoError(t, p.Close())
}
