package strata

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/sys/unix"
)

// lockHolder says which process holds the flock(2) lock on the file or
// directory at path, as " is held by process 1234 (strata serve)", or "" when it cannot
// tell: /proc/locks lists each lock with the pid that took it and the
// locked file's device and inode, which are matched with path's; the
// program's name and first argument come from /proc/<pid>/cmdline when
// they can be read. Only a failed Open pays for it.
func lockHolder(path string) string {
	pid := lockPID(path)
	if pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" is held by process %d%s", pid, programName(pid))
}

// lockHeld reports whether a process holds the flock(2) lock on the file
// or directory at path, from /proc/locks, without taking it (which would make the
// holder's Open fail for that moment).
func lockHeld(path string) bool { return lockPID(path) > 0 }

// lockPID returns the pid that /proc/locks shows holding a flock(2) lock
// on the file or directory at path, or 0 when none is listed or it cannot tell.
func lockPID(path string) int {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	ino := strconv.FormatUint(st.Ino, 10)
	dev := strconv.FormatUint(uint64(unix.Major(uint64(st.Dev))), 16) + ":" + strconv.FormatUint(uint64(unix.Minor(uint64(st.Dev))), 16)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a lock
		// others wait for has "->" after the number, so fields[1] is not
		// FLOCK.
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" {
			continue
		}
		id := fields[5]
		i := strings.LastIndexByte(id, ':')
		if i < 0 || id[i+1:] != ino || !sameDev(id[:i], dev) {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
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

// programName returns " (name arg)" for the process pid, from the base
// name of its program and its first argument unless that is a flag; ""
// when /proc/<pid>/cmdline cannot be read.
func programName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return ""
	}
	args := bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0})
	name := filepath.Base(string(args[0]))
	if len(args) > 1 && len(args[1]) > 0 && args[1][0] != '-' {
		name += " " + string(args[1])
	}
	if pid == os.Getpid() {
		name += ", this process"
	}
	const maxName = 80
	if len(name) > maxName {
		name = name[:maxName] + "…"
	}
	return " (" + strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, name) + ")"
}
