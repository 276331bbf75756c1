//go:build unix

package partition

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used,
// and true; a benchmark on a shared machine compares it rather than the
// wall-clock time other processes stretch.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
