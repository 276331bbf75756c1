package strata

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/stratalog/strata/topic"
)

// The headers DeadLetter adds to a dead letter. The first five are Kafka
// Connect's (DeadLetterQueueReporter in connect/runtime, KIP-298), so tools
// that read Connect's dead-letter queues read these; values are UTF-8
// text, numbers in decimal.
const (
	// HeaderErrorTopic is the topic the record was consumed from.
	HeaderErrorTopic = "__connect.errors.topic"
	// HeaderErrorPartition is its partition.
	HeaderErrorPartition = "__connect.errors.partition"
	// HeaderErrorOffset is its offset.
	HeaderErrorOffset = "__connect.errors.offset"
	// HeaderErrorClass is the Go type of the error (fmt's %T), where
	// Connect puts the exception's class name.
	HeaderErrorClass = "__connect.errors.exception.class.name"
	// HeaderErrorMessage is the error's message.
	HeaderErrorMessage = "__connect.errors.exception.message"
	// HeaderErrorTime is when the record was dead-lettered, in
	// milliseconds since the Unix epoch by the store's clock. Connect has
	// no such header; the dead letter's own timestamp is the original
	// record's, as Connect keeps it.
	HeaderErrorTime = "__strata.errors.timestamp"
)

// DeadLetter moves a record the application cannot process (a poison
// record) out of the way: it appends m — its key, value, timestamp and
// headers — to the topic deadLetters, with headers saying where it came
// from and why (HeaderErrorTopic and the others), then commits past it,
// as CommitMessages(ctx, m) does: every record before m in its partition
// counts as processed. A nil cause adds no error headers.
//
// The headers are appended after the record's own, which are kept, as
// Kafka Connect's DeadLetterQueueReporter adds its headers to the
// record's (Kafka allows a header name more than once): a record
// dead-lettered twice carries both failures, and the last header of each
// name is the latest. Readers should take the last header of a name.
//
// deadLetters is created with one partition if it does not exist, as Kafka
// Connect creates its dead-letter queue; an existing topic is used as it
// is (a keyed record goes to its key's partition).
//
// The append and the commit are two steps, so the guarantee is at least
// once: a crash (or an eviction, ErrFenced) between them leaves the dead
// letter appended and m uncommitted, and m, delivered again, is
// dead-lettered again. Readers of deadLetters should tolerate duplicates
// (the original topic, partition and offset identify one).
//
// m must come from a partition the consumer owns (else ErrNotOwner), and
// deadLetters must be a valid topic name other than m's own topic
// (ErrInvalidTopic, ErrReservedTopic, ErrInvalidConfig); a refused call
// appends and commits nothing.
func (c *Consumer) DeadLetter(ctx context.Context, deadLetters string, m Message, cause error) (err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	tp := TopicPartition{Topic: m.Topic, Partition: m.Partition}
	where := fmt.Sprintf("strata: dead letter of %s offset %d to %q", tp, m.Offset, deadLetters)
	if err := c.checkCommitCall(ctx); err != nil {
		return err
	}
	if err := topic.ValidateName(deadLetters); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if topic.IsInternal(deadLetters) {
		return fmt.Errorf("%s: %w", where, ErrReservedTopic)
	}
	if deadLetters == m.Topic {
		return fmt.Errorf("%s: the record's own topic: %w", where, ErrInvalidConfig)
	}
	c.mu.Lock()
	owned := c.ownsLocked(tp)
	c.mu.Unlock()
	if !owned {
		return fmt.Errorf("%s: consumer %q of group %q: %w", where, c.MemberID(), c.group, ErrNotOwner)
	}
	if err := c.checkMessageOffset(tp, m.Offset); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if _, err := c.s.topic(deadLetters); errors.Is(err, ErrUnknownTopic) {
		if err := c.s.CreateTopic(deadLetters, TopicConfig{Partitions: 1}); err != nil && !errors.Is(err, ErrTopicExists) {
			return fmt.Errorf("%s: %w", where, err)
		}
	} else if err != nil {
		return err
	}
	r := m.Record
	r.Headers = deadLetterHeaders(m, cause, c.s.opts.Now().UnixMilli())
	if _, err := c.s.Append(ctx, deadLetters, r); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	// m's partition and offset are checked above; commitOffsets checks the
	// range again against the partition as it is now.
	if err := c.checkCommitCall(ctx); err != nil {
		return err
	}
	return c.commitOffsets(map[TopicPartition]int64{tp: m.Offset + 1})
}

// deadLetterHeaders returns m's headers followed by the dead-letter
// headers, all of them, as Kafka Connect's DeadLetterQueueReporter adds
// its headers to the record's.
func deadLetterHeaders(m Message, cause error, nowMs int64) []Header {
	hs := slices.Clip(m.Headers)
	add := func(key, value string) { hs = append(hs, Header{Key: key, Value: []byte(value)}) }
	add(HeaderErrorTopic, m.Topic)
	add(HeaderErrorPartition, strconv.Itoa(m.Partition))
	add(HeaderErrorOffset, strconv.FormatInt(m.Offset, 10))
	if cause != nil {
		add(HeaderErrorClass, fmt.Sprintf("%T", cause))
		add(HeaderErrorMessage, cause.Error())
	}
	add(HeaderErrorTime, strconv.FormatInt(nowMs, 10))
	return hs
}
