//go:build !race

package partition

// raceEnabled reports whether the race detector is on: it makes sync.Pool
// drop some of what is put back, so pooled buffers are allocated again.
const raceEnabled = false
