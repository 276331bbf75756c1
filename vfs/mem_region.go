package vfs

import (
	"runtime"
	"sync"
)

// regionMin is the capacity from which a Mem file's contents live in a
// region of their own (see newBacking) rather than on the Go heap.
const regionMin = 1 << 20

// A region is memory for a Mem file's contents that the operating system
// hands out lazily: where anonymous memory maps are available (unix), a
// private anonymous mmap(2) whose pages cost nothing until touched and read
// as zeros, so that a mapping that reserves 1 GiB for a log to grow into,
// or an index preallocated to 10 MiB, costs what is written into it. The
// memory goes back to a small pool of regions by free (cleared, and kept
// for the next file of that capacity: unmapping memory that was touched is
// what costs), or to the operating system once the region is unreachable
// (a file that was dropped, or a crashed Mem's).
type region struct {
	mem     []byte
	dirty   int64           // mem[dirty:] is all zeros: no file size reached past it
	cleanup runtime.Cleanup // unmaps mem once the region is unreachable
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
// are available, else on the Go heap (and a nil region).
func newBacking(n, c int64) ([]byte, *region) {
	if c < regionMin {
		return make([]byte, n, c), nil
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
		mem, err := mapRegion(int(c))
		if err != nil {
			return make([]byte, n, c), nil
		}
		r = &region{mem: mem}
		r.cleanup = runtime.AddCleanup(r, unmapRegion, mem)
	}
	r.dirty = n
	return r.mem[:n:c], r
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
