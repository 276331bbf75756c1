//go:build race

package strata_test

// raceEnabled reports whether the race detector is on, which makes the
// crash tests try fewer crashes at each point to stay as quick.
const raceEnabled = true
