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

// subscription is one Subscribe call's reading: a group consumer's poll
// loop, or one reader per partition without a group.
type subscription struct {
	s     *Subscriber
	topic string
	ctx   context.Context // ends with the subscription
	out   chan<- *message.Message
}

// runGroup delivers what the group consumer c polls: each partition's
// messages in order, one at a time, the partitions of a poll side by side;
// a message acked is committed before the next of its partition is
// delivered. The next poll comes once every partition is through.
func (sub *subscription) runGroup(c *strata.Consumer) {
	s := sub.s
	defer func() {
		if err := c.Close(); err != nil && !errors.Is(err, strata.ErrClosed) {
			s.fail(fmt.Errorf("watermill: closing the consumer of topic %q in group %q: %w", sub.topic, s.cfg.ConsumerGroup, err))
		}
	}()
	for {
		msgs, err := c.Poll(sub.ctx)
		if err != nil {
			if sub.ctx.Err() != nil || errors.Is(err, strata.ErrClosed) {
				return
			}
			s.logger.Error("Poll failed", err, sub.fields())
			if !sub.sleep(s.cfg.RetrySleep) {
				return
			}
			continue
		}
		runs := byPartition(msgs)
		if len(runs) == 1 {
			sub.deliverCommit(c, runs[0])
		} else {
			var wg sync.WaitGroup
			for _, run := range runs {
				wg.Go(func() { sub.deliverCommit(c, run) })
			}
			wg.Wait()
		}
		if sub.ctx.Err() != nil {
			return
		}
	}
}

// deliverCommit delivers msgs, of one partition, in order, committing
// each as it is acked, until the subscription ends.
func (sub *subscription) deliverCommit(c *strata.Consumer, msgs []strata.Message) {
	// Commits outlive the subscription's context: a message acked just
	// before Close is still committed.
	ctx := context.WithoutCancel(sub.ctx)
	for _, m := range msgs {
		if !sub.deliver(m) {
			return
		}
		if err := c.CommitMessages(ctx, m); err != nil {
			// Fenced (evicted while a message waited): the partition is
			// someone else's, who delivers the rest, and Poll rejoins.
			// Otherwise read the partition again from m, which was not
			// committed: the Seek fails, harmlessly, when it is not ours.
			sub.s.logger.Info("Commit failed, dropping the rest of the poll", sub.fields().Add(watermill.LogFields{
				"partition": m.Partition, "offset": m.Offset, "err": err.Error()}))
			_ = c.Seek(strata.TopicPartition{Topic: m.Topic, Partition: m.Partition}, m.Offset)
			return
		}
	}
}

// byPartition splits msgs into runs of one partition each, in their order.
func byPartition(msgs []strata.Message) [][]strata.Message {
	if len(msgs) == 0 {
		return nil
	}
	one := true
	for _, m := range msgs[1:] {
		one = one && m.Partition == msgs[0].Partition && m.Topic == msgs[0].Topic
	}
	if one {
		return [][]strata.Message{msgs}
	}
	var runs [][]strata.Message
	idx := map[strata.TopicPartition]int{}
	for _, m := range msgs {
		tp := strata.TopicPartition{Topic: m.Topic, Partition: m.Partition}
		i, ok := idx[tp]
		if !ok {
			i = len(runs)
			idx[tp] = i
			runs = append(runs, nil)
		}
		runs[i] = append(runs[i], m)
	}
	return runs
}

// startOffsets returns where a subscription without a group starts each
// partition of its topic (as many as the topic has now).
func (sub *subscription) startOffsets() ([]int64, error) {
	d, err := sub.s.store.DescribeTopic(sub.topic)
	if err != nil {
		return nil, fmt.Errorf("watermill: subscribing to topic %q: %w", sub.topic, err)
	}
	starts := make([]int64, len(d.Partitions))
	for p := range starts {
		if starts[p], err = sub.startOffset(p); err != nil {
			return nil, fmt.Errorf("watermill: subscribing to partition %d of topic %q: %w", p, sub.topic, err)
		}
	}
	return starts, nil
}

// startOffset is where a subscription without a group starts partition p
// (and starts it again when the records at its position are gone).
func (sub *subscription) startOffset(p int) (int64, error) {
	spec := strata.Earliest
	if sub.s.cfg.InitialOffset == Latest {
		spec = strata.Latest
	}
	return sub.s.view().ListOffsets(sub.topic, p, spec)
}

// runPartitions delivers every partition of the topic, each from its
// start offset, one reader each.
func (sub *subscription) runPartitions(starts []int64) {
	var wg sync.WaitGroup
	for p, start := range starts {
		wg.Go(func() { sub.readPartition(p, start) })
	}
	wg.Wait()
}

// readPartition delivers partition p's messages in order from pos,
// tailing it, until the subscription ends.
func (sub *subscription) readPartition(p int, pos int64) {
	s := sub.s
	v := s.view()
	var err error
	for {
		if err == nil {
			for rec, rerr := range v.Records(sub.ctx, sub.topic, p, pos) {
				if rerr != nil {
					err = rerr
					break
				}
				if !sub.deliver(strata.Message{Topic: sub.topic, Partition: p, Record: cloneRecord(rec)}) {
					return
				}
				pos = rec.Offset + 1
			}
		}
		switch {
		case sub.ctx.Err() != nil || errors.Is(err, strata.ErrClosed):
			return
		case errors.Is(err, strata.ErrOffsetOutOfRange):
			// Retention or DeleteRecords removed the records at pos.
			pos, err = sub.startOffset(p)
			continue
		case errors.Is(err, strata.ErrUnknownTopic), errors.Is(err, strata.ErrUnknownPartition):
			s.fail(fmt.Errorf("watermill: reading partition %d of topic %q: %w", p, sub.topic, err))
			return
		}
		if err != nil {
			s.logger.Error("Read failed", err, sub.fields().Add(watermill.LogFields{"partition": p, "offset": pos}))
		}
		if !sub.sleep(s.cfg.RetrySleep) {
			return
		}
		err = nil
	}
}

// deliver hands m to the subscription's channel, as many times as it is
// nacked, and returns true once it is acked; false when the subscription
// ended first.
func (sub *subscription) deliver(m strata.Message) bool {
	s := sub.s
	for {
		msg, err := s.cfg.Unmarshaler.Unmarshal(m)
		if err != nil {
			// Delivering it again would fail again: skip it, as Kafka
			// consumers skip a record they cannot deserialize and go on.
			s.logger.Error("Cannot unmarshal a record, skipping it", err,
				sub.fields().Add(watermill.LogFields{"partition": m.Partition, "offset": m.Offset}))
			return true
		}
		ctx, cancel := context.WithCancel(withRecord(sub.ctx, m.Partition, m.Offset, m.Timestamp, m.Key))
		msg.SetContext(ctx)
		select {
		case sub.out <- msg:
		case <-sub.ctx.Done():
			cancel()
			return false
		}
		select {
		case <-msg.Acked():
			cancel()
			return true
		case <-msg.Nacked():
			cancel()
			if !sub.sleep(s.cfg.NackResendSleep) {
				return false
			}
		case <-sub.ctx.Done():
			cancel()
			// An Ack that raced the end still counts (and is committed).
			select {
			case <-msg.Acked():
				return true
			default:
				return false
			}
		}
	}
}

// sleep waits d, or less if the subscription ends (then it returns
// false).
func (sub *subscription) sleep(d time.Duration) bool {
	if d <= 0 {
		return sub.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-sub.ctx.Done():
		return false
	}
}

func (sub *subscription) fields() watermill.LogFields {
	return watermill.LogFields{"topic": sub.topic, "consumer_group": sub.s.cfg.ConsumerGroup}
}
