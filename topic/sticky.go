package topic

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// StickyPartitioner chooses partitions for records without a key the way
// Kafka's producer did from 2.4 to 3.2 (KIP-480, StickyPartitionCache): it
// sticks to one randomly chosen partition for a whole batch and, when told
// that a new batch starts, moves to a partition chosen at random among the
// others.
//
// Partition counts are passed on every call because a topic may grow.
// Partition keeps the sticky partition while it stays below the count it is
// given and picks a new one otherwise.
//
// A StickyPartitioner is safe for concurrent use. Partition takes no lock
// once a partition has been chosen. The zero value is ready to use and
// randomly seeded; a StickyPartitioner must not be copied after first use.
type StickyPartitioner struct {
	// sticky is the sticky partition plus one, so that the zero value means
	// "none chosen yet". Partition reads it without the lock; it is written
	// only with mu held.
	sticky atomic.Int64

	mu struct {
		sync.Mutex
		rng *rand.Rand // nil until first needed in a zero StickyPartitioner
	}
}

// NewStickyPartitioner returns a StickyPartitioner whose random choices come
// from a PCG generator (math/rand/v2) seeded with seed, so that two
// partitioners made with the same non-zero seed make the same choices for
// the same sequence of calls. Seed 0 means a random seed.
func NewStickyPartitioner(seed uint64) *StickyPartitioner {
	s := &StickyPartitioner{}
	s.mu.rng = newRand(seed)
	return s
}

// newRand returns a PCG-backed generator for seed, or a randomly seeded one
// for seed 0.
func newRand(seed uint64) *rand.Rand {
	if seed == 0 {
		return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	// The second word is an arbitrary constant (2^64 / golden ratio); only
	// seed varies.
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// Partition returns the current sticky partition of a topic with
// numPartitions partitions (its total count), choosing one at random on
// first use or when the current one is not below numPartitions. It returns
// -1 if numPartitions < 1.
func (s *StickyPartitioner) Partition(numPartitions int) int {
	if numPartitions < 1 {
		return -1
	}
	if p := s.sticky.Load() - 1; p >= 0 && p < int64(numPartitions) {
		return int(p)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Another goroutine may have chosen while this one waited for the lock.
	if p := s.sticky.Load() - 1; p >= 0 && p < int64(numPartitions) {
		return int(p)
	}
	return s.switchLocked(numPartitions)
}

// NextBatch switches to a new sticky partition and returns it. The caller
// calls it when a new batch starts, for example because the previous batch
// for the sticky partition is full. With numPartitions > 1 the new partition
// is chosen uniformly among all partitions except the current one; with
// numPartitions == 1 it is 0. It returns -1 if numPartitions < 1.
//
// Every call switches. Kafka passes the partition whose batch filled and
// switches only if that is still the sticky one, so that producers racing to
// report the same full batch switch once; callers that can race this way
// should serialize their NextBatch calls.
func (s *StickyPartitioner) NextBatch(numPartitions int) int {
	if numPartitions < 1 {
		return -1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.switchLocked(numPartitions)
}

// switchLocked picks a partition different from the current one (if there
// is a current one below numPartitions and another to pick), makes it the
// sticky partition and returns it. numPartitions must be at least 1 and
// s.mu must be held.
func (s *StickyPartitioner) switchLocked(numPartitions int) int {
	if s.mu.rng == nil {
		s.mu.rng = newRand(0)
	}
	n := int64(numPartitions)
	var p int64
	switch cur := s.sticky.Load() - 1; {
	case n == 1:
		p = 0
	case cur < 0 || cur >= n:
		p = s.mu.rng.Int64N(n)
	default:
		// Uniform over the n-1 others: draw from [0, n-1) and skip cur.
		p = s.mu.rng.Int64N(n - 1)
		if p >= cur {
			p++
		}
	}
	s.sticky.Store(p + 1)
	return int(p)
}
