package vfs

// ReleaseMap drops the page-table entries of m, a page-aligned part of a
// shared mapping of f that File.Map returned, keeping its contents: bytes
// written through the mapping stay in the file (the kernel marks their
// pages dirty and writes them back as it would have), and a later read of m
// faults the pages in again from the page cache. It never fails; it may do
// nothing.
//
// Unmapping a mapping costs a moment per page that was written through it
// (about a quarter of a microsecond each in a VM): a segment's .log, whose
// small appends are copied into its 1 GiB mapping, would pay it all at
// Close, 10 ms or more after a few hundred MiB. Releasing the written part
// as appends move on spreads that cost over them and leaves Close little to
// unmap. On Linux it is madvise(MADV_DONTNEED), which for a shared mapping
// of a file discards only the mapping's view, never data; elsewhere, and
// for a File that is not the OS's own (an in-memory file), it does nothing.
func ReleaseMap(f File, m []byte) {
	if r, ok := f.(mapReleaser); ok && len(m) > 0 {
		r.releaseMap(m)
	}
}

// mapReleaser is a File whose mapping can give back its page-table
// entries: the OS file system's on Linux.
type mapReleaser interface {
	releaseMap(m []byte)
}
