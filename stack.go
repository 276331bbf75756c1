package strata

// openStackBytes is the frame growStack takes: large enough that a new
// goroutine's stack grows to 16 KiB in one step, which holds Open's
// deepest call path and a point read after it (TestOpenStack holds them
// to it), and small enough that a caller using a few KiB of its stack
// already is not grown past that.
const openStackBytes = 9 << 10

// growStack grows the calling goroutine's stack, in one step, to hold
// Open's deepest call path, before Open runs it.
//
// A goroutine's stack starts at 2 KiB and doubles when a call needs more:
// the runtime copies the stack and adjusts every frame on it, reading each
// function's stack maps. Left to itself, Open's path grows a new
// goroutine's stack twice, the second time a dozen or more frames deep
// (under the partition's open), and in a process where that code and its
// metadata have not run yet (a service's first Open, a command-line tool,
// BenchmarkReopenCold's child) the two copies took about 40 µs of a
// 380 µs Open where they were measured. One large frame at the top makes
// it one copy of the caller's few frames instead (about 9 µs there); on a
// stack that is already large enough it costs the clearing of the frame,
// about 150 ns. CockroachDB grows its stacks ahead of its
// storage paths for the same reason (its growstack package).
//
//go:noinline
func growStack() {
	var frame [openStackBytes]byte
	touchFrame(frame[:])
}

// touchFrame writes to b, so that growStack's frame is kept.
//
//go:noinline
func touchFrame(b []byte) { b[len(b)-1] = 1 }
