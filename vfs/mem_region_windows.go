//go:build windows

package vfs

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// mapRegion reserves size bytes of address space, none of it committed:
// commitRegion commits what the file's size reaches, so that a mapping
// that reserves 1 GiB charges the system's commit limit with what the file
// holds, not 1 GiB.
func mapRegion(size int) (mem []byte, committed int, err error) {
	addr, err := windows.VirtualAlloc(0, uintptr(size), windows.MEM_RESERVE, windows.PAGE_NOACCESS)
	if err != nil {
		return nil, 0, err
	}
	// Converted without a uintptr-to-Pointer conversion vet would flag: the
	// memory is not the Go heap's, so nothing moves it.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), size), 0, nil
}

// commitRegion commits b, a part of a region mapRegion reserved, readable
// and writable; its pages read as zeros until written.
func commitRegion(b []byte) error {
	_, err := windows.VirtualAlloc(uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), windows.MEM_COMMIT, windows.PAGE_READWRITE)
	return err
}

func unmapRegion(mem []byte) {
	_ = windows.VirtualFree(uintptr(unsafe.Pointer(&mem[0])), 0, windows.MEM_RELEASE)
}

// setReserveOnly does nothing: every region is reserved, then committed.
func setReserveOnly(bool) {}

// zeroRegion clears b, which is committed.
func zeroRegion(b []byte) { clear(b) }
