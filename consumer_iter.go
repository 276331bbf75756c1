package strata

import (
	"context"
	"iter"
)

// Messages returns an iterator over the consumer's messages: it polls
// (see Poll) and yields them one at a time, for as long as the loop runs.
// It yields a final error and stops when a Poll fails: ctx.Err() once ctx
// ends, ErrClosed, a damaged partition's ErrCorrupt; ranging again goes on
// from there.
//
// The consumer's position in a partition moves as its messages are
// yielded, not as they are polled: Commit in the loop body commits the
// message in hand and those before it, and after a break the next Poll (or
// Messages) starts right after the last message yielded. Messages of a
// partition paused, sought or revoked during the loop are not yielded.
func (c *Consumer) Messages(ctx context.Context) iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		for {
			msgs, err := c.Poll(ctx)
			if err != nil {
				yield(Message{}, err)
				return
			}
			if !c.yieldEach(msgs, yield) {
				return
			}
		}
	}
}

// yieldEach yields msgs, moving each partition's position past a message
// as it is yielded. It returns false when the loop has ended.
func (c *Consumer) yieldEach(msgs []Message, yield func(Message, error) bool) bool {
	// The position of each partition of msgs: where the consumer's is while
	// the iterator moves it (cur), and where Poll left it (end).
	type span struct {
		cur, end int64
		last     int // index in msgs of the partition's last message
		dropped  bool
	}
	spans := map[TopicPartition]*span{}
	for i, m := range msgs {
		tp := TopicPartition{Topic: m.Topic, Partition: m.Partition}
		if s := spans[tp]; s != nil {
			s.last = i
		} else {
			spans[tp] = &span{cur: m.Offset, last: i}
		}
	}
	c.mu.Lock()
	for tp, s := range spans {
		s.end = c.pos[tp]
		c.pos[tp] = s.cur
	}
	c.mu.Unlock()
	for i, m := range msgs {
		tp := TopicPartition{Topic: m.Topic, Partition: m.Partition}
		s := spans[tp]
		if s.dropped {
			continue
		}
		next := m.Offset + 1
		if i == s.last {
			next = s.end
		}
		c.mu.Lock()
		err := c.checkOpenLocked(true)
		pos, owned := c.pos[tp]
		ok := err == nil && owned && pos == s.cur && !c.paused[tp]
		if ok {
			c.pos[tp], s.cur = next, next
		}
		c.mu.Unlock()
		if err != nil {
			yield(Message{}, storeErr(err))
			return false
		}
		if !ok {
			s.dropped = true
			continue
		}
		if !yield(m, nil) {
			return false
		}
	}
	return true
}
