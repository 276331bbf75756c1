//go:build !unix

package cputime

import "time"

// Process returns false: the process's CPU time is not read on this system.
func Process() (time.Duration, bool) { return 0, false }
