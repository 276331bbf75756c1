package index

import (
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratalog/strata/vfs"
	"github.com/stretchr/testify/require"
)

// TestConcurrentReaders runs lock-free readers against one writer appending
// to both indexes: every lookup must answer from a prefix of the entries
// that is at least as long as the one published when the lookup started.
// The writer then seals both while the readers go on.
func TestConcurrentReaders(t *testing.T) {
	const (
		base    = 1 << 33
		entries = 20000
		readers = 4
	)
	// Entry i of the offset index is (base+2i+1, 10i); of the time index
	// (1000+3i, base+2i+1).
	offsetOf := func(i int) int64 { return base + 2*int64(i) + 1 }
	eachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		ox := openOffset(t, fsys, filepath.Join(dir, "c.index"), base, entries*OffsetEntrySize, true)
		tx := openTime(t, fsys, filepath.Join(dir, "c.timeindex"), base, (entries+1)*TimeEntrySize, true)

		var done atomic.Bool
		var wg sync.WaitGroup
		errs := make(chan string, readers)
		for r := range readers {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(r), 9))
				fail := func(msg string) { errs <- msg; done.Store(true) }
				for lookups := 0; !done.Load() || lookups < 1000; lookups++ {
					// The offset index.
					target := base - 2 + rng.Int64N(2*entries+4)
					before := ox.Entries()
					o, p := ox.Lookup(target)
					after := ox.Entries()
					want := int((target - base - 1) / 2) // floor entry in the full index
					if target < base+1 {
						want = -1
					}
					want = min(want, entries-1)
					got := -1
					if o != base {
						got = int((o - base - 1) / 2)
						if offsetOf(got) != o || p != int32(10*got) {
							fail("offset entry torn")
							return
						}
					} else if p != 0 {
						fail("no entry but a position")
						return
					}
					if got > want || got < min(want, before-1) || got > after-1 {
						fail("offset lookup outside the published prefix")
						return
					}
					if after > 0 {
						i := rng.IntN(after)
						if o, p := ox.Entry(i); o != offsetOf(i) || p != int32(10*i) {
							fail("offset Entry torn")
							return
						}
					}

					// The time index.
					ts := 1000 - 5 + rng.Int64N(3*entries+10)
					before = tx.Entries()
					gotTs, gotO := tx.Lookup(ts)
					after = tx.Entries()
					want = min(int((ts-1000)/3), entries-1)
					if ts < 1000 {
						want = -1
					}
					got = -1
					if gotTs != NoTimestamp {
						got = int((gotTs - 1000) / 3)
						if gotTs != 1000+3*int64(got) || gotO != offsetOf(got) {
							fail("time entry torn")
							return
						}
					} else if gotO != base {
						fail("no time entry but an offset")
						return
					}
					if got > want || got < min(want, before-1) || got > after-1 {
						fail("time lookup outside the published prefix")
						return
					}
				}
			})
		}
		for i := range entries {
			require.NoError(t, ox.Append(offsetOf(i), int32(10*i)))
			require.NoError(t, tx.MaybeAppend(1000+3*int64(i), offsetOf(i), false))
		}
		// Sealing shrinks the files under the readers; the mappings stay.
		require.NoError(t, ox.Trim())
		require.NoError(t, tx.Trim())
		done.Store(true)
		wg.Wait()
		close(errs)
		for msg := range errs {
			t.Error(msg)
		}
		require.True(t, ox.Full())
		require.True(t, tx.Full())
	})
}
