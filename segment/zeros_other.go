//go:build !linux

package segment

// zerosAhead is false outside Linux, where writing zeros ahead of the
// appends was not measured: only Config.ZeroFill writes them. See the
// Linux file.
const zerosAhead = false
