package strata_test

import (
	"fmt"

	"github.com/stratalog/strata"
)

// EnsureOffsetsTopic creates __consumer_offsets before any commit, as a
// Kafka broker creates its own when a client looks for a group's
// coordinator.
func ExampleStore_EnsureOffsetsTopic() {
	s, done := exampleStore(nil)
	defer done()
	_, err := s.DescribeTopic(strata.ConsumerOffsetsTopic)
	fmt.Println(err != nil)
	if err := s.EnsureOffsetsTopic(); err != nil {
		panic(err)
	}
	d, err := s.DescribeTopic(strata.ConsumerOffsetsTopic)
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Name, len(d.Partitions), d.Config.CleanupPolicy)
	// Output:
	// true
	// __consumer_offsets 1 compact
}
