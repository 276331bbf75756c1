package topic_test

import (
	"sync"
	"testing"

	"github.com/stratalog/strata/topic"
	"github.com/stretchr/testify/require"
)

var partitionCounts = []struct {
	name string
	n    int
}{
	{"n=1", 1},
	{"n=2", 2},
	{"n=3", 3},
	{"n=10", 10},
	{"n=1000", 1000},
}

func TestStickyPartitionerSticks(t *testing.T) {
	for _, tt := range partitionCounts {
		t.Run(tt.name, func(t *testing.T) {
			s := topic.NewStickyPartitioner(42)
			p := s.Partition(tt.n)
			require.GreaterOrEqual(t, p, 0)
			require.Less(t, p, tt.n)
			for range 100 {
				require.Equal(t, p, s.Partition(tt.n))
			}
		})
	}
}

func TestStickyPartitionerNextBatch(t *testing.T) {
	for _, tt := range partitionCounts {
		t.Run(tt.name, func(t *testing.T) {
			s := topic.NewStickyPartitioner(7)
			prev := s.Partition(tt.n)
			for range 200 {
				p := s.NextBatch(tt.n)
				require.GreaterOrEqual(t, p, 0)
				require.Less(t, p, tt.n)
				if tt.n == 1 {
					require.Equal(t, 0, p)
				} else {
					require.NotEqual(t, prev, p)
				}
				require.Equal(t, p, s.Partition(tt.n), "sticks after the switch")
				require.Equal(t, p, s.Partition(tt.n))
				prev = p
			}
		})
	}
}

// TestStickyPartitionerNextBatchFirst: NextBatch before any Partition call
// picks any partition.
func TestStickyPartitionerNextBatchFirst(t *testing.T) {
	s := topic.NewStickyPartitioner(9)
	p := s.NextBatch(5)
	require.GreaterOrEqual(t, p, 0)
	require.Less(t, p, 5)
	require.Equal(t, p, s.Partition(5))
}

func TestStickyPartitionerInvalidCount(t *testing.T) {
	tests := []struct {
		name string
		n    int
	}{
		{"zero", 0},
		{"negative", -4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := topic.NewStickyPartitioner(1)
			require.Equal(t, -1, s.Partition(tt.n))
			require.Equal(t, -1, s.NextBatch(tt.n))

			p := s.Partition(8)
			require.Equal(t, -1, s.Partition(tt.n))
			require.Equal(t, -1, s.NextBatch(tt.n))
			require.Equal(t, p, s.Partition(8), "an invalid count leaves the sticky partition alone")
		})
	}
}

// TestStickyPartitionerCountChanges: a sticky partition survives a larger
// count and is replaced when the count no longer covers it.
func TestStickyPartitionerCountChanges(t *testing.T) {
	s := topic.NewStickyPartitioner(3)
	p := s.Partition(10)
	for p < 5 {
		p = s.NextBatch(10)
	}
	require.Equal(t, p, s.Partition(20), "grown: still valid, kept")

	q := s.Partition(5)
	require.GreaterOrEqual(t, q, 0)
	require.Less(t, q, 5, "shrunk below the sticky partition: re-chosen")
	require.Equal(t, q, s.Partition(5))
	require.Equal(t, q, s.Partition(10), "the new choice sticks")

	r := s.NextBatch(3)
	require.Less(t, r, 3)
	if q < 3 {
		require.NotEqual(t, q, r)
	}
}

func TestStickyPartitionerZeroValue(t *testing.T) {
	var s topic.StickyPartitioner
	p := s.Partition(10)
	require.GreaterOrEqual(t, p, 0)
	require.Less(t, p, 10)
	require.Equal(t, p, s.Partition(10))
	require.NotEqual(t, p, s.NextBatch(10))
}

// choices returns the first partition and the next count choices of s.
func choices(s *topic.StickyPartitioner, n, count int) []int {
	out := []int{s.Partition(n)}
	for range count {
		out = append(out, s.NextBatch(n))
	}
	return out
}

func TestStickyPartitionerSeed(t *testing.T) {
	a := choices(topic.NewStickyPartitioner(12345), 10, 100)
	require.Equal(t, a, choices(topic.NewStickyPartitioner(12345), 10, 100), "same seed, same choices")
	require.NotEqual(t, a, choices(topic.NewStickyPartitioner(54321), 10, 100), "other seed, other choices")

	// Seed 0 draws a random seed: two such partitioners disagree somewhere in
	// 64 choices out of 1000 partitions except with negligible probability.
	require.NotEqual(t, choices(topic.NewStickyPartitioner(0), 1000, 64), choices(topic.NewStickyPartitioner(0), 1000, 64))
}

// TestStickyPartitionerDistribution: over many batches every partition gets
// about the same share, the next partition is uniform among the others, and
// first choices are uniform across seeds.
func TestStickyPartitionerDistribution(t *testing.T) {
	t.Run("batches", func(t *testing.T) {
		const n, batches = 10, 100_000
		s := topic.NewStickyPartitioner(2024)
		var counts [n]int
		for range batches {
			counts[s.NextBatch(n)]++
		}
		for p, c := range counts {
			require.InDelta(t, batches/n, c, 0.05*batches/n, "partition %d", p)
		}
	})
	t.Run("transitions", func(t *testing.T) {
		const n, batches = 4, 120_000
		s := topic.NewStickyPartitioner(2025)
		var counts [n][n]int
		prev := s.Partition(n)
		for range batches {
			p := s.NextBatch(n)
			counts[prev][p]++
			prev = p
		}
		const want = batches / (n * (n - 1))
		for from := range n {
			for to := range n {
				if from == to {
					require.Zero(t, counts[from][to], "%d -> %d", from, to)
					continue
				}
				require.InDelta(t, want, counts[from][to], 0.05*want, "%d -> %d", from, to)
			}
		}
	})
	t.Run("first choice", func(t *testing.T) {
		const n, seeds = 10, 20_000
		var counts [n]int
		for seed := range uint64(seeds) {
			counts[topic.NewStickyPartitioner(seed+1).Partition(n)]++
		}
		for p, c := range counts {
			require.InDelta(t, seeds/n, c, 0.1*seeds/n, "partition %d", p)
		}
	})
}

// TestStickyPartitionerConcurrent runs Partition and NextBatch from several
// goroutines; run it with -race.
func TestStickyPartitionerConcurrent(t *testing.T) {
	t.Run("first use", func(t *testing.T) {
		// Goroutines racing on a fresh partitioner all see one choice.
		for range 20 {
			s := topic.NewStickyPartitioner(0)
			const goroutines = 8
			got := make([]int, goroutines)
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() { got[g] = s.Partition(1000) })
			}
			wg.Wait()
			for _, p := range got {
				require.Equal(t, got[0], p)
			}
		}
	})
	t.Run("mixed", func(t *testing.T) {
		const goroutines, ops, n = 8, 5_000, 16
		var s topic.StickyPartitioner
		errs := make(chan int, goroutines)
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				bad := 0
				for i := range ops {
					var p int
					if (i+g)%10 == 0 {
						p = s.NextBatch(n)
					} else {
						p = s.Partition(n)
					}
					if p < 0 || p >= n {
						bad++
					}
				}
				errs <- bad
			})
		}
		wg.Wait()
		close(errs)
		for bad := range errs {
			require.Zero(t, bad, "partitions out of range")
		}
	})
}
