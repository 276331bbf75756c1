//go:build !unix

package peers

import "time"

// netCPU returns false: the process's CPU time is not measured here.
func netCPU() (time.Duration, bool) { return 0, false }
