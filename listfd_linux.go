package strata

import "github.com/stratalog/strata/vfs"

// listFD lists the directory open at fd, which it reads from its current
// position (a new descriptor: the start) to the end, with getdents64(2):
// the names but "." and "..", and true.
func listFD(fd int) ([]string, bool, error) {
	names, err := vfs.ListFD(fd)
	return names, err == nil, err
}
