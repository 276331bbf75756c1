package vfs

import "golang.org/x/sys/unix"

// releaseMap is madvise(MADV_DONTNEED) of m; see ReleaseMap.
func (osFile) releaseMap(m []byte) {
	_ = unix.Madvise(m, unix.MADV_DONTNEED)
}
