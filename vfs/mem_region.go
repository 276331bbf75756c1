package vfs

import (
	"fmt"
	"runtime"
	"sync"
)

// regionMin is the capacity from which a Mem file's contents live in a
// region of their own (see newBacking) rather than on the Go heap.
const regionMin = 1 << 20

// A region is memory for a Mem file's contents that the operating system
// hands out lazily, so that a mapping that reserves 1 GiB for a log to grow
// into, or an index preallocated to 10 MiB, costs what is written into it:
// on unix a private anonymous mmap(2), whose pages cost nothing until
// touched and read as zeros; on Windows address space reserved with
// VirtualAlloc and committed (which charges the system's commit limit) as
// the file's size reaches into it, so that no byte past the largest size
// the file had is committed. mem[:committed] may be touched, the rest not
// (an access violation on Windows): commit is called before the file's
// size grows. The
// memory goes back to a small pool of regions by free (cleared, and kept
// for the next file of that capacity: unmapping memory that was touched is
// what costs), or to the operating system once the region is unreachable
// (a file that was dropped, or a crashed Mem's).
type region struct {
	mem       []byte
	committed int64           // mem[:committed] may be touched
	dirty     int64           // mem[dirty:] is all zeros: no file size reached past it
	cleanup   runtime.Cleanup // unmaps mem once the region is unreachable
}

// regionPool keeps freed regions by capacity, up to poolMax of each.
var regionPool struct {
	sync.Mutex
	free map[int][]*region
}

const (
	poolMax  = 8
	clearMax = 256 << 10 // dirty bytes cleared by writing; more are given back to the OS
)

// newBacking returns a zeroed array of length n and capacity c for a Mem
// file, in a region (returned too) if c is at least regionMin and regions
// are available, else on the Go heap (and a nil region). It fails only if
// a region's memory for n bytes cannot be committed.
func newBacking(n, c int64) ([]byte, *region, error) {
	if c < regionMin {
		return make([]byte, n, c), nil, nil
	}
	regionPool.Lock()
	free := regionPool.free[int(c)]
	var r *region
	if len(free) > 0 {
		r = free[len(free)-1]
		regionPool.free[int(c)] = free[:len(free)-1]
	}
	regionPool.Unlock()
	if r == nil {
		mem, committed, err := mapRegion(int(c))
		if err != nil {
			return make([]byte, n, c), nil, nil
		}
		r = &region{mem: mem, committed: int64(committed)}
		r.cleanup = runtime.AddCleanup(r, unmapRegion, mem)
	}
	if err := r.commit(n); err != nil {
		r.free()
		return nil, nil, err
	}
	r.dirty = n
	return r.mem[:n:c], r, nil
}

// commitStep is the granularity of commit: a multiple of every page size
// and of Windows's allocation granularity (64 KiB).
const commitStep = 1 << 20

// commit makes the first n bytes of the region accessible, committing
// them (in steps of commitStep) where they are not yet. A nil region (the
// heap) has nothing to commit.
func (r *region) commit(n int64) error {
	if r == nil || n <= r.committed {
		return nil
	}
	to := min(int64(len(r.mem)), (n+commitStep-1)/commitStep*commitStep)
	if err := commitRegion(r.mem[r.committed:to]); err != nil {
		return fmt.Errorf("vfs: committing %d bytes of memory for a file: %w", to-r.committed, err)
	}
	r.committed = to
	return nil
}

// free gives the region back, cleared, to the pool, or to the operating
// system if the pool is full. Nothing may touch its memory after.
func (r *region) free() {
	if r == nil || r.mem == nil {
		return
	}
	r.zero(r.mem[:r.dirty])
	r.dirty = 0
	regionPool.Lock()
	if regionPool.free == nil {
		regionPool.free = map[int][]*region{}
	}
	c := len(r.mem)
	if len(regionPool.free[c]) < poolMax {
		regionPool.free[c] = append(regionPool.free[c], r)
		regionPool.Unlock()
		return
	}
	regionPool.Unlock()
	r.cleanup.Stop()
	unmapRegion(r.mem)
	r.mem = nil
}

// grown clears the bytes of b, the part of the contents from offset off on
// that a file's growth just took in, and notes how far the file reached.
// In a region only the part below dirty can hold old bytes; on the heap
// (r nil) all of b is cleared.
func (r *region) grown(b []byte, off int64) {
	if r == nil {
		clear(b)
		return
	}
	if off < r.dirty {
		r.zero(b[:min(int64(len(b)), r.dirty-off)])
	}
	r.dirty = max(r.dirty, off+int64(len(b)))
}

// zero clears b, a part of the region's memory: by writing if it is
// small, else by giving whole pages back to the operating system.
func (r *region) zero(b []byte) {
	if len(b) <= clearMax {
		clear(b)
		return
	}
	zeroRegion(b)
}
