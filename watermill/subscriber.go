package watermill

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stratalog/strata"
)

// InitialOffset is where a subscription starts reading a partition for
// which its group has no committed offset (or, without a group, every
// partition).
type InitialOffset int

const (
	// Earliest starts at the partition's first retained record, as
	// watermill-kafka's tests configure sarama (OffsetOldest). The default.
	Earliest InitialOffset = iota
	// Latest starts at the partition's end: only messages published from
	// then on are delivered (Kafka's auto.offset.reset default).
	Latest
)

// SubscriberConfig configures a [Subscriber]. The zero value is the
// defaults: no group, from the earliest record.
type SubscriberConfig struct {
	// ConsumerGroup is the Strata consumer group the subscriptions join.
	// Subscriptions of one group share a topic's partitions, each
	// partition read by one of them at a time, and resume at the group's
	// committed offsets. Empty: no group, every subscription reads every
	// partition from InitialOffset and commits nothing.
	ConsumerGroup string
	// InitialOffset is where a partition without a committed offset is
	// read from. Default Earliest.
	InitialOffset InitialOffset
	// Unmarshaler turns records into messages. Default DefaultMarshaler{}.
	Unmarshaler Unmarshaler
	// Topic is the config of the topics Subscribe and SubscribeInitialize
	// create, those that do not exist yet. Default: the store's defaults
	// (one partition).
	Topic strata.TopicConfig
	// NackResendSleep is how long after a Nack the message is delivered
	// again. Default 100 ms, as watermill-kafka's; negative: at once.
	NackResendSleep time.Duration
	// RetrySleep is how long a subscription waits before it reads again
	// after a read failed (a damaged batch, ErrCorrupt). Default 1 s.
	RetrySleep time.Duration
	// MaxPollRecords bounds the records a group subscription takes from
	// the store at a time (strata.ConsumerOptions.MaxPollRecords): a
	// partition revoked from the subscription moves on once these are
	// delivered. Default 500.
	MaxPollRecords int
	// Isolation is what the subscriptions read of transactions (see
	// strata.Isolation). Default: the store's.
	Isolation strata.Isolation
}

// Subscriber delivers the messages of a Store's topics. It is a
// message.Subscriber and a message.SubscribeInitializer, safe for
// concurrent use; every Subscribe call is a subscription of its own (in a
// group: a consumer of its own).
type Subscriber struct {
	store  *strata.Store
	cfg    SubscriberConfig
	logger watermill.LoggerAdapter
	topics *topics

	mu     sync.Mutex
	closed bool
	subs   sync.WaitGroup
	stop   context.CancelFunc
	ctx    context.Context // ends at Close
	errs   []error         // what subscriptions failed with as they stopped
}

// NewSubscriber returns a Subscriber that reads store. The store stays
// the caller's: Close the subscriber before the store. A nil logger logs
// nothing.
func NewSubscriber(store *strata.Store, cfg SubscriberConfig, logger watermill.LoggerAdapter) (*Subscriber, error) {
	if store == nil {
		return nil, errors.New("watermill: NewSubscriber needs a store")
	}
	if cfg.InitialOffset != Earliest && cfg.InitialOffset != Latest {
		return nil, fmt.Errorf("watermill: initial offset %d is neither Earliest (0) nor Latest (1)", cfg.InitialOffset)
	}
	if cfg.MaxPollRecords < 0 {
		return nil, fmt.Errorf("watermill: MaxPollRecords %d is negative", cfg.MaxPollRecords)
	}
	if _, err := cfg.Topic.WithDefaults(); err != nil {
		return nil, fmt.Errorf("watermill: subscriber's topic config: %w", err)
	}
	if cfg.Unmarshaler == nil {
		cfg.Unmarshaler = DefaultMarshaler{}
	}
	if cfg.NackResendSleep == 0 {
		cfg.NackResendSleep = 100 * time.Millisecond
	}
	if cfg.RetrySleep <= 0 {
		cfg.RetrySleep = time.Second
	}
	if logger == nil {
		logger = watermill.NopLogger{}
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Subscriber{
		store: store, cfg: cfg, logger: logger,
		topics: &topics{store: store, cfg: cfg.Topic},
		ctx:    ctx, stop: stop,
	}, nil
}

// SubscribeInitialize creates topic unless it exists.
func (s *Subscriber) SubscribeInitialize(topic string) error {
	return s.topics.ensure(topic)
}

// Subscribe starts a subscription to topic (creating the topic if it does
// not exist) and returns the channel of its messages. The channel closes
// when ctx ends or the Subscriber closes; each message's context derives
// from ctx and ends when the message is acked or nacked. Subscribe
// positions the subscription before it returns: without a group, on every
// partition; in a group, on the partitions no other member of the group
// holds (it joins the group, and takes the others as they revoke them).
// So with InitialOffset Latest, what is published after Subscribe returns
// is delivered.
func (s *Subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	ctx = orBackground(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrSubscriberClosed
	}
	if err := s.topics.ensure(topic); err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	out := make(chan *message.Message)
	sub := &subscription{s: s, topic: topic, ctx: sctx, out: out}
	var run func()
	if s.cfg.ConsumerGroup == "" {
		starts, err := sub.startOffsets()
		if err != nil {
			stop()
			cancel()
			return nil, err
		}
		run = func() { sub.runPartitions(starts) }
	} else {
		c, err := s.store.Consumer(s.cfg.ConsumerGroup, []string{topic}, strata.ConsumerOptions{
			AutoOffsetReset: s.reset(),
			MaxPollRecords:  s.cfg.MaxPollRecords,
			Isolation:       s.cfg.Isolation,
		})
		if err != nil {
			stop()
			cancel()
			return nil, fmt.Errorf("watermill: subscribing to topic %q in group %q: %w", topic, s.cfg.ConsumerGroup, err)
		}
		// A Poll checks in with the group first: the partitions nobody
		// holds are this consumer's, and positioned, when Subscribe
		// returns. An ended context returns before any record is read.
		done, end := context.WithCancel(context.Background())
		end()
		if _, err := c.Poll(done); err != nil && !errors.Is(err, context.Canceled) {
			stop()
			cancel()
			return nil, errors.Join(fmt.Errorf("watermill: subscribing to topic %q in group %q: %w", topic, s.cfg.ConsumerGroup, err), c.Close())
		}
		run = func() { sub.runGroup(c) }
	}
	s.subs.Add(1)
	go func() {
		defer s.subs.Done()
		defer close(out)
		defer stop()
		defer cancel()
		run()
	}()
	return out, nil
}

// Close ends every subscription and waits for them: each commits what was
// acked (group commits are made at each Ack, before the next message of
// its partition is delivered), leaves its group and closes its channel. A message handed
// out and not acked yet is delivered again to the group. Close returns
// the errors subscriptions stopped with, if any. Closing twice is a no-op.
func (s *Subscriber) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.subs.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// fail records an error a subscription stopped with, for Close.
func (s *Subscriber) fail(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

func (s *Subscriber) reset() strata.OffsetReset {
	if s.cfg.InitialOffset == Latest {
		return strata.ResetLatest
	}
	return strata.ResetEarliest
}

func (s *Subscriber) view() strata.View { return s.store.View(s.cfg.Isolation) }

var (
	_ message.Subscriber           = (*Subscriber)(nil)
	_ message.SubscribeInitializer = (*Subscriber)(nil)
)
