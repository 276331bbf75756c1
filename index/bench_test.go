package index

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchSizes are the entry counts of the lookup benchmarks; 1,000,000 is
// most of a default (10 MiB) offset index.
var benchSizes = []int{1000, 100000, 1000000}

// benchCase is a lookup benchmark's index size and where its targets fall:
// anywhere ("random") or among the last 1000 entries ("tail", the in-sync
// reader's lookup, which stays in the warm tail).
type benchCase struct {
	entries int
	tail    bool
}

func (c benchCase) String() string {
	if c.tail {
		return fmt.Sprintf("entries=%d/targets=tail", c.entries)
	}
	return fmt.Sprintf("entries=%d/targets=random", c.entries)
}

// targets returns 4096 targets for keys spaced 4 apart from first.
func (c benchCase) targets(first int64) []int64 {
	lo, hi := first, first+int64(4*c.entries)
	if c.tail {
		lo = max(lo, hi-4*1000)
	}
	return benchTargets(lo, hi)
}

var benchCases = func() []benchCase {
	var cs []benchCase
	for _, n := range benchSizes {
		cs = append(cs, benchCase{n, false})
		if n > 1000 {
			cs = append(cs, benchCase{n, true})
		}
	}
	return cs
}()

// benchTargets returns 4096 random lookup targets in [lo, hi).
func benchTargets(lo, hi int64) []int64 {
	r := rand.New(rand.NewPCG(7, 7))
	ts := make([]int64, 4096)
	for i := range ts {
		ts[i] = lo + r.Int64N(hi-lo)
	}
	return ts
}

func BenchmarkOffsetLookup(b *testing.B) {
	for _, c := range benchCases {
		n := c.entries
		b.Run(c.String(), func(b *testing.B) {
			fsys, dir := benchFS(b)
			x := openOffset(b, fsys, filepath.Join(dir, "b.index"), 0, n*OffsetEntrySize, true)
			for i := range n {
				require.NoError(b, x.Append(int64(4*i+1), int32(1024*i)))
			}
			targets := c.targets(0)
			var sink int64
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				o, _ := x.Lookup(targets[i&4095])
				sink += o
			}
			_ = sink
		})
	}
}

func BenchmarkTimeLookup(b *testing.B) {
	for _, c := range benchCases {
		n := c.entries
		b.Run(c.String(), func(b *testing.B) {
			fsys, dir := benchFS(b)
			x := openTime(b, fsys, filepath.Join(dir, "b.timeindex"), 0, (n+1)*TimeEntrySize, true)
			for i := range n {
				require.NoError(b, x.MaybeAppend(int64(1000+4*i), int64(i), false))
			}
			targets := c.targets(1000)
			var sink int64
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_, o := x.Lookup(targets[i&4095])
				sink += o
			}
			_ = sink
		})
	}
}

// BenchmarkBaselineSortSearch is the yardstick for the lookups: sort.Search
// for the largest key at most the target over an []int64 of the same size.
func BenchmarkBaselineSortSearch(b *testing.B) {
	for _, c := range benchCases {
		n := c.entries
		b.Run(c.String(), func(b *testing.B) {
			keys := make([]int64, n)
			for i := range keys {
				keys[i] = int64(4*i + 1)
			}
			targets := c.targets(0)
			var sink int
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				t := targets[i&4095]
				sink += sort.Search(len(keys), func(j int) bool { return keys[j] > t }) - 1
			}
			_ = sink
		})
	}
}
