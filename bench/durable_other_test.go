//go:build !linux

package bench

import "testing"

// benchmarkRawDurable has no baselines outside Linux, where the raw
// system calls it compares (fdatasync, pwritev2, fallocate) are missing.
func benchmarkRawDurable(*testing.B, []byte, int) {}

// rawPairedLogs has no raw ceiling outside Linux but raw-grow-fsync.
func rawPairedLogs(*testing.B, string, []byte) []durableLog { return nil }
