//go:build !linux

package bench

import "testing"

// benchmarkRawDurable has no baselines outside Linux, where the raw
// system calls it compares (fdatasync, pwritev2, fallocate) are missing.
func benchmarkRawDurable(*testing.B, []byte, int) {}
