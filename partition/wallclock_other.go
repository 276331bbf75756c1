//go:build !(linux && amd64)

package partition

import "time"

// wallMillis returns the wall clock in Unix milliseconds.
func wallMillis() int64 { return time.Now().UnixMilli() }
