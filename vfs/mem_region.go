package vfs

import "runtime"

// regionMin is the capacity from which a Mem file's contents live in a
// region of their own (see newRegion) rather than on the Go heap.
const regionMin = 1 << 20

// A region is memory for a Mem file's contents that the operating system
// hands out lazily: where anonymous memory maps are available (unix), a
// private anonymous mmap(2) whose pages cost nothing until touched and read
// as zeros, so that a mapping that reserves 1 GiB for a log to grow into,
// or an index preallocated to 10 MiB, costs what is written into it. The
// memory is released by free, or once the region is unreachable (a file
// that was dropped, or a crashed Mem's).
type region struct {
	mem     []byte
	cleanup runtime.Cleanup // unmaps mem once the region is unreachable
}

// newBacking returns a zeroed array of length n and capacity c for a Mem
// file, in a region (returned too) if c is at least regionMin and regions
// are available, else on the Go heap (and a nil region).
func newBacking(n, c int64) ([]byte, *region) {
	if c >= regionMin {
		if mem, err := mapRegion(int(c)); err == nil {
			r := &region{mem: mem}
			r.cleanup = runtime.AddCleanup(r, unmapRegion, mem)
			return mem[:n:c], r
		}
	}
	return make([]byte, n, c), nil
}

// free releases the region at once; nothing may touch its memory after.
func (r *region) free() {
	if r != nil && r.mem != nil {
		r.cleanup.Stop()
		unmapRegion(r.mem)
		r.mem = nil
	}
}

// zero clears b, which lies in r's memory (or on the heap if r is nil),
// giving whole pages back to the operating system instead of writing them.
func (r *region) zero(b []byte) {
	if r == nil {
		clear(b)
		return
	}
	zeroRegion(b)
}
