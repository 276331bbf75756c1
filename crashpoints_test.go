package strata_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stratalog/strata/vfs"
)

// condOpCount is how many operations of condCrashOps m has counted.
func condOpCount(m *vfs.Mem) int {
	n := 0
	for _, op := range condCrashOps {
		n += m.Count(op)
	}
	return n
}

// crashedWay returns what a crash of m leaves, the torn-th of three ways:
// only what was synced (0), a torn prefix of the rest (1), or random pages
// of it (2), drawn from a source seeded by k and torn.
func crashedWay(m *vfs.Mem, k, torn int) *vfs.Mem {
	rng := rand.New(rand.NewPCG(uint64(k), uint64(torn)))
	switch torn {
	case 0:
		return m.Crash()
	case 1:
		return m.CrashKeepingPrefix(rng)
	default:
		return m.CrashKeepingPages(rng)
	}
}

// crashPoints calls fn for every crash point k in [0, total] (every
// shortStep-th under -short) and each of crashedWay's three ways there, or,
// under the race detector, which makes a run several times slower, one of
// them in turn. A workload with no operation to fail at fails t.
func crashPoints(t *testing.T, total, shortStep int, fn func(k, torn int)) {
	t.Helper()
	if total <= 0 {
		t.Fatalf("the workload made %d operations to fail at", total)
	}
	step := 1
	if testing.Short() {
		step = shortStep
	}
	for k := 0; k <= total; k += step {
		for torn := range 3 {
			if raceEnabled && torn != k%3 {
				continue
			}
			fn(k, torn)
		}
	}
}
