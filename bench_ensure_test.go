package strata_test

import (
	"testing"

	"github.com/stratalog/strata"
)

// BenchmarkEnsureTopic is EnsureTopic of a topic that is there with the
// config wanted, what a service calls at every start after Open.
func BenchmarkEnsureTopic(b *testing.B) {
	s := benchOpenStore(b, b.TempDir())
	defer s.Close()
	cfg := strata.TopicConfig{Partitions: 1}
	if err := s.EnsureTopic(benchTopic, cfg); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.EnsureTopic(benchTopic, cfg); err != nil {
			b.Fatal(err)
		}
	}
}
