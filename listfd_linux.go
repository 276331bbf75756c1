package strata

import "golang.org/x/sys/unix"

// listFD lists the directory open at fd, which it reads from its current
// position (a new descriptor: the start) to the end, with getdents64(2):
// the names but "." and "..", and true.
func listFD(fd int) ([]string, bool, error) {
	var buf [4096]byte
	var names []string
	for {
		n, err := unix.Getdents(fd, buf[:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, false, err
		case n <= 0:
			return names, true, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}
