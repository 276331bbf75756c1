package watermill

import (
	"errors"
	"fmt"
	"sync"

	"github.com/stratalog/strata"
)

// topics creates the topics a Publisher or Subscriber uses on demand,
// once each.
type topics struct {
	store *strata.Store
	cfg   strata.TopicConfig
	known sync.Map // topic name -> struct{}
}

// ensure creates topic with the configured config unless it exists; an
// existing topic is used as it is, whatever its config, as Kafka's
// auto-created topics are.
func (t *topics) ensure(name string) error {
	if _, ok := t.known.Load(name); ok {
		return nil
	}
	if _, err := t.store.DescribeTopic(name); err == nil {
		t.known.Store(name, struct{}{})
		return nil
	} else if !errors.Is(err, strata.ErrUnknownTopic) {
		return fmt.Errorf("watermill: topic %q: %w", name, err)
	}
	if err := t.store.CreateTopic(name, t.cfg); err != nil && !errors.Is(err, strata.ErrTopicExists) {
		return fmt.Errorf("watermill: creating topic %q: %w", name, err)
	}
	t.known.Store(name, struct{}{})
	return nil
}

// forget drops what ensure learnt of topic, after an append found it gone
// (deleted since).
func (t *topics) forget(name string) { t.known.Delete(name) }
