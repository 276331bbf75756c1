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
	var buf [4096]byte
	names := make([]string, 0, 8) // a partition's directory holds about six
	for {
		n, err := unix.Getdents(fd, buf[:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "readdirent", Path: dir, Err: err}
		case n <= 0:
			slices.Sort(names)
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}
