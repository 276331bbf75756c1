// Package cputime reads the CPU time the process has used, for benchmarks
// on a shared machine: CPU time varies much less than wall-clock time when
// other processes compete for the cores.
package cputime
