package vfs

import (
	"io/fs"
	"slices"

	"golang.org/x/sys/unix"
)

// readDirOS returns the sorted names of the entries of dir, but "." and
// "..": one open(2) of the directory, getdents64(2) to its end, close. It
// builds no *os.File and no DirEntry, as os.ReadDir does for each listing.
func readDirOS(dir string) ([]string, error) {
	fd, err := openFD(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	names, err := ListFD(fd)
	if err != nil {
		return nil, &fs.PathError{Op: "readdirent", Path: dir, Err: err}
	}
	slices.Sort(names)
	return names, nil
}

// ListFD returns the names of the entries of the directory open at the
// descriptor fd, but "." and "..", in the order getdents64(2) gives them
// (not sorted), reading from the descriptor's position (the start, on a
// new one) to the end; an error is the system call's (Linux only).
func ListFD(fd int) ([]string, error) {
	var buf [4096]byte
	names := make([]string, 0, 8) // a partition's directory holds about six
	for {
		n, err := unix.Getdents(fd, buf[:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, err
		case n <= 0:
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}
