//go:build race

package log_test

// raceEnabled reports whether the race detector is on: its instrumentation
// moves some of the encoder's stack memory to the heap.
const raceEnabled = true
