package strata

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// resourceRoom returns how many more files this process may open
// (RLIMIT_NOFILE less the descriptors open now) and how many more memory
// mappings it may make (vm.max_map_count less the mappings it has), -1
// where that cannot be read.
func resourceRoom() (files, maps int) {
	files, maps = -1, -1
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil {
		if open, err := os.ReadDir("/proc/self/fd"); err == nil {
			files = int(min(lim.Cur, 1<<31)) - len(open)
		}
	}
	if b, err := os.ReadFile("/proc/sys/vm/max_map_count"); err == nil {
		if limit, err := strconv.Atoi(string(bytes.TrimSpace(b))); err == nil {
			if m, err := os.ReadFile("/proc/self/maps"); err == nil {
				maps = limit - bytes.Count(m, []byte{'\n'})
			}
		}
	}
	return files, maps
}
