//go:build !unix

package partition

import "time"

// processCPU returns false: the process's CPU time is not measured here.
func processCPU() (time.Duration, bool) { return 0, false }
