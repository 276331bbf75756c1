package topic_test

import (
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/stratalog/strata/topic"
)

// BenchmarkMurmur2 hashes keys of several sizes with Murmur2 and, as a
// baseline, with FNV-1a 32 (Sarama's and kafka-go's Hash default).
func BenchmarkMurmur2(b *testing.B) {
	for _, impl := range []string{"murmur2", "fnv1a"} {
		for _, size := range []int{8, 64, 1024} {
			key := make([]byte, size)
			for i := range key {
				key[i] = byte(i*31 + 7)
			}
			b.Run(fmt.Sprintf("impl=%s/size=%dB", impl, size), func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				var sum uint32
				switch impl {
				case "murmur2":
					for b.Loop() {
						sum += uint32(topic.Murmur2(key))
					}
				case "fnv1a":
					h := fnv.New32a()
					for b.Loop() {
						h.Reset()
						h.Write(key)
						sum += h.Sum32()
					}
				}
				sink = sum
			})
		}
	}
}

// BenchmarkStickyPartitioner measures Partition, the per-record call, from
// parallel goroutines, with a NextBatch every 1000 records.
func BenchmarkStickyPartitioner(b *testing.B) {
	s := topic.NewStickyPartitioner(1)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var sum, i int
		for pb.Next() {
			if i++; i%1000 == 0 {
				sum += s.NextBatch(64)
			} else {
				sum += s.Partition(64)
			}
		}
		sink = uint32(sum)
	})
}

// sink keeps benchmark results alive.
var sink uint32
