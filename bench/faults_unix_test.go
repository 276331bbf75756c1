//go:build unix

package bench

import "syscall"

// minorFaults returns the page faults the process has taken that read no
// disk (the page was in the page cache), and true; false where they cannot
// be read.
func minorFaults() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return int64(ru.Minflt), true
}
