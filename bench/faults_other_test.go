//go:build !unix

package bench

// minorFaults returns false: the process's page faults are not read on
// this system.
func minorFaults() (int64, bool) { return 0, false }
