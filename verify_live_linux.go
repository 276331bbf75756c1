package strata

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lockHeld reports whether a process holds the flock(2) lock on the file
// at path, from /proc/locks, without taking it (which would make the
// holder's Open fail for that moment).
func lockHeld(path string) bool {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return false
	}
	defer f.Close()
	// "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234567 0 EOF"
	want := strconv.FormatUint(st.Ino, 10)
	dev := strconv.FormatUint(uint64(unix.Major(uint64(st.Dev))), 16) + ":" + strconv.FormatUint(uint64(unix.Minor(uint64(st.Dev))), 16)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" {
			continue
		}
		id := fields[5]
		i := strings.LastIndexByte(id, ':')
		if i < 0 || id[i+1:] != want {
			continue
		}
		if d := id[:i]; sameDev(d, dev) {
			return true
		}
	}
	return false
}

// sameDev compares "maj:min" device numbers in hex, ignoring zero padding.
func sameDev(a, b string) bool {
	am, an, ok1 := strings.Cut(a, ":")
	bm, bn, ok2 := strings.Cut(b, ":")
	if !ok1 || !ok2 {
		return false
	}
	x, e1 := strconv.ParseUint(am, 16, 32)
	y, e2 := strconv.ParseUint(an, 16, 32)
	p, e3 := strconv.ParseUint(bm, 16, 32)
	q, e4 := strconv.ParseUint(bn, 16, 32)
	return e1 == nil && e2 == nil && e3 == nil && e4 == nil && x == p && y == q
}
