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

// lockHolder says which process holds the flock(2) lock on the file at
// path, as " is held by process 1234 (strata serve)", or "" when it cannot
// tell: /proc/locks lists each lock with the pid that took it and the
// locked file's device and inode, which are matched with the file's; the
// program's name and first argument come from /proc/<pid>/cmdline when
// they can be read. Only a failed Open pays for it.
func lockHolder(path string) string {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return ""
	}
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	f, err := os.Open("/proc/locks")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a lock
		// others wait for has "->" after the number.
		fields := strings.Fields(sc.Text())
		if len(fields) > 1 && fields[1] == "->" {
			continue
		}
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != want {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		return fmt.Sprintf(" is held by process %d%s", pid, programName(pid))
	}
	return ""
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
