package watermill

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stratalog/strata"
)

// ErrPublisherClosed is returned by Publish after Close.
var ErrPublisherClosed = errors.New("watermill: publisher closed")

// ErrSubscriberClosed is returned by Subscribe after Close.
var ErrSubscriberClosed = errors.New("watermill: subscriber closed")

// PublisherConfig configures a [Publisher]. The zero value is the
// defaults.
type PublisherConfig struct {
	// Marshaler turns messages into records. Default DefaultMarshaler{}
	// (no key: the store's sticky partition).
	Marshaler Marshaler
	// Topic is the config of the topics Publish creates, those that do not
	// exist yet. Default: the store's defaults (one partition).
	Topic strata.TopicConfig
}

// Publisher appends Watermill messages to the topics of a Store. It is a
// message.Publisher, safe for concurrent use. Publish is synchronous:
// when it returns nil the messages are appended (see strata.Store.Append
// for what survives a crash).
type Publisher struct {
	store  *strata.Store
	cfg    PublisherConfig
	logger watermill.LoggerAdapter
	topics *topics

	mu     sync.RWMutex // held for reading by Publish, for writing by Close
	closed bool
}

// NewPublisher returns a Publisher that appends to store. The store stays
// the caller's: Close the publisher before the store. A nil logger logs
// nothing.
func NewPublisher(store *strata.Store, cfg PublisherConfig, logger watermill.LoggerAdapter) (*Publisher, error) {
	if store == nil {
		return nil, errors.New("watermill: NewPublisher needs a store")
	}
	if cfg.Marshaler == nil {
		cfg.Marshaler = DefaultMarshaler{}
	}
	if _, err := cfg.Topic.WithDefaults(); err != nil {
		return nil, fmt.Errorf("watermill: publisher's topic config: %w", err)
	}
	if logger == nil {
		logger = watermill.NopLogger{}
	}
	return &Publisher{store: store, cfg: cfg, logger: logger, topics: &topics{store: store, cfg: cfg.Topic}}, nil
}

// Publish appends messages to topic, creating it if it does not exist.
// The messages are appended in one Append: each partition's messages as
// one batch, whole or not at all, in the order given. Messages too many
// for one batch (over the topic's MaxBatchBytes) are appended one at a
// time instead, and a failure then leaves those before it appended. The
// context of the first message bounds the call. If marshalling a message
// fails, nothing is appended (and no topic created).
func (p *Publisher) Publish(topic string, messages ...*message.Message) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return ErrPublisherClosed
	}
	if len(messages) == 0 {
		return nil
	}
	records := make([]strata.Record, len(messages))
	for i, msg := range messages {
		rec, err := p.cfg.Marshaler.Marshal(topic, msg)
		if err != nil {
			return fmt.Errorf("watermill: marshalling message %s for topic %q: %w", msg.UUID, topic, err)
		}
		records[i] = rec
	}
	if err := p.topics.ensure(topic); err != nil {
		return err
	}
	ctx := messages[0].Context()
	_, err := p.store.Append(ctx, topic, records...)
	if errors.Is(err, strata.ErrBatchTooLarge) && len(records) > 1 {
		// Append wrote nothing: one message at a time, then.
		for i := range records {
			if _, err = p.store.Append(ctx, topic, records[i]); err != nil {
				return fmt.Errorf("watermill: publishing message %s to topic %q: %w", messages[i].UUID, topic, err)
			}
		}
		err = nil
	}
	if errors.Is(err, strata.ErrUnknownTopic) {
		p.topics.forget(topic) // deleted since: created again at the next Publish
	}
	if err != nil {
		return fmt.Errorf("watermill: publishing %d messages to topic %q: %w", len(messages), topic, err)
	}
	p.logger.Trace("Messages published", watermill.LogFields{"topic": topic, "messages": len(messages)})
	return nil
}

// Close stops the publisher: later Publish calls fail with
// ErrPublisherClosed. Publish is synchronous, so there is nothing to flush:
// Close waits for the calls under way. Closing twice is a no-op.
func (p *Publisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	return nil
}

var _ message.Publisher = (*Publisher)(nil)

// orBackground is ctx, or context.Background() for a nil one.
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
