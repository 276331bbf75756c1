//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used,
// and true. On a shared machine the CPU time a benchmark spends per op
// varies less than the wall-clock time that other processes stretch.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
