//go:build unix

package vfs

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

var pageSize = os.Getpagesize()

// reserveOnly makes new regions reserve their address space inaccessible
// (PROT_NONE) and commit it by mprotect as files grow, as regions do on
// Windows, so that the tests run that path here too.
var reserveOnly bool

// setReserveOnly sets reserveOnly, for tests.
func setReserveOnly(on bool) { reserveOnly = on }

// mapRegion maps size bytes of private anonymous memory and returns how
// many of them may be touched at once: all of them, the kernel giving out
// pages as they are touched, unless reserveOnly.
func mapRegion(size int) (mem []byte, committed int, err error) {
	prot := unix.PROT_READ | unix.PROT_WRITE
	if reserveOnly {
		prot = unix.PROT_NONE
	}
	mem, err = unix.Mmap(-1, 0, size, prot, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, 0, err
	}
	if reserveOnly {
		return mem, 0, nil
	}
	return mem, size, nil
}

// commitRegion makes b, a part of a region mapRegion reserved, readable
// and writable.
func commitRegion(b []byte) error {
	return unix.Mprotect(b, unix.PROT_READ|unix.PROT_WRITE)
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
