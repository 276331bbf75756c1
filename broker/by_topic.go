package broker

import (
	"iter"

	"github.com/stratalog/strata"
)

// byTopic yields each run of parts of one topic, in order, with the
// run's partitions: one per topic for parts sorted by topic, as the
// store's group and transaction calls give them.
func byTopic(parts []strata.TopicPartition) iter.Seq2[string, []int32] {
	return func(yield func(string, []int32) bool) {
		for i := 0; i < len(parts); {
			j := i
			for j < len(parts) && parts[j].Topic == parts[i].Topic {
				j++
			}
			ps := make([]int32, 0, j-i)
			for _, tp := range parts[i:j] {
				ps = append(ps, int32(tp.Partition))
			}
			if !yield(parts[i].Topic, ps) {
				return
			}
			i = j
		}
	}
}
