//go:build unix

package vfs

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

var pageSize = os.Getpagesize()

func mapRegion(size int) ([]byte, error) {
	return unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
}

func unmapRegion(mem []byte) { _ = unix.Munmap(mem) }

// zeroRegion clears b: the whole pages in it with madvise(MADV_DONTNEED),
// after which a private anonymous mapping reads zeros, the rest by
// writing.
func zeroRegion(b []byte) {
	if len(b) < 2*pageSize {
		clear(b)
		return
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	first := int((uintptr(pageSize) - start%uintptr(pageSize)) % uintptr(pageSize))
	last := first + (len(b)-first)/pageSize*pageSize
	if err := unix.Madvise(b[first:last], unix.MADV_DONTNEED); err != nil {
		clear(b)
		return
	}
	clear(b[:first])
	clear(b[last:])
}
