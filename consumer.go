package strata

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/topic"
)

// ConsumerOptions configure a group Consumer. Zero fields mean the defaults.
type ConsumerOptions struct {
	// AutoOffsetReset is where the consumer starts on a partition without a
	// committed offset, or whose commit fell below the start offset.
	// Default ResetLatest, as Kafka's auto.offset.reset.
	AutoOffsetReset OffsetReset
	// MaxPollRecords bounds what one Poll returns. Default 500 (Kafka's
	// max.poll.records).
	MaxPollRecords int
	// OnAssigned runs in Poll when partitions are handed to this consumer,
	// before any of their records are returned.
	OnAssigned func(c *Consumer, parts []TopicPartition)
	// OnRevoked runs in Poll (or Close) when partitions are taken away,
	// before the group hands them to another consumer: commit what was
	// processed there (c.Commit), or lose it to redelivery.
	OnRevoked func(c *Consumer, parts []TopicPartition)
	// AutoCommitInterval, if positive, commits what Poll returned at most
	// this often, at the start of a Poll, and also when partitions are
	// revoked and at Close — after the records were handed out, not after
	// they were processed. Default off: the
	// documented pattern is process, then Commit (at least once).
	AutoCommitInterval time.Duration
	// PollWait is how long Poll waits for records before it checks in with
	// the group again (its heartbeat), when ctx allows. Default 100 ms.
	PollWait time.Duration
}

// Message is a record with the topic and partition it came from.
type Message struct {
	Topic     string
	Partition int
	Record
}

// Consumer is a member of a consumer group: the group shares the partitions
// of the topics it subscribes to among its live consumers, each partition to
// exactly one of them at a time, and each consumer reads its partitions from
// the group's committed offsets on. A Consumer is meant for one goroutine
// (Poll, Commit and Close from the same one); many Consumers, in one group
// or several, may run at once.
type Consumer struct {
	s      *Store
	group  string
	topics []string
	opts   ConsumerOptions

	mu       sync.Mutex
	ref      group.MemberRef
	pos      map[TopicPartition]int64   // next offset to fetch (after what Poll returned), per owned partition
	ids      map[TopicPartition]TopicID // the id of the topic pos was found in, per owned partition
	pending  map[TopicPartition]bool    // owned, but no start position yet
	order    []TopicPartition           // owned partitions, for fair polling
	next     int                        // where the next Poll starts in order
	closed   bool
	lastAuto time.Time
	deferred error // a partition's read error, for the next Poll: it came with other partitions' records
}

// Consumer joins group as a new consumer subscribed to topics. The topics
// need not exist yet: partitions are assigned as they appear. Call Poll
// often — it is also the consumer's heartbeat: one that does not poll for
// longer than Options.SessionTimeout is evicted, its partitions go to the
// others and its later commits fail with ErrFenced.
func (s *Store) Consumer(groupName string, topics []string, opts ConsumerOptions) (_ *Consumer, err error) {
	defer wrapErr(&err)
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if len(topics) == 0 {
		return nil, fmt.Errorf("strata: consumer of group %q subscribes to no topic: %w", groupName, ErrInvalidConfig)
	}
	for _, name := range topics {
		if err := topic.ValidateName(name); err != nil {
			return nil, fmt.Errorf("strata: consumer of group %q: %w", groupName, err)
		}
		if topic.IsInternal(name) {
			return nil, fmt.Errorf("strata: consumer of group %q subscribes to %q: %w", groupName, name, ErrReservedTopic)
		}
	}
	if opts.MaxPollRecords <= 0 {
		opts.MaxPollRecords = 500
	}
	if opts.PollWait <= 0 {
		opts.PollWait = 100 * time.Millisecond
	}
	ref, err := s.groups.Join(groupName, topics)
	if err != nil {
		return nil, fmt.Errorf("strata: joining group %q: %w", groupName, err)
	}
	return &Consumer{
		s: s, group: groupName, topics: slices.Clone(topics), opts: opts, ref: ref,
		pos: map[TopicPartition]int64{}, ids: map[TopicPartition]TopicID{},
		pending: map[TopicPartition]bool{}, lastAuto: s.opts.Now(),
	}, nil
}

// MemberID returns the consumer's id in its group.
func (c *Consumer) MemberID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ref.MemberID
}

// Assignment returns the partitions the consumer owns now, sorted.
func (c *Consumer) Assignment() []TopicPartition {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.order)
}

// Poll returns records from the consumer's partitions, up to
// MaxPollRecords, waiting until there are some or ctx ends (then it returns
// ctx.Err()). Each Poll first checks in with the group: partitions to give
// up are revoked (OnRevoked runs, then they are released) and new ones
// assigned (OnAssigned runs; reading starts at the committed offset or per
// AutoOffsetReset). The records' bytes are the caller's.
//
// A partition that cannot be read (a damaged batch, ErrCorrupt) does not
// hold the others up: Poll returns what the others have, and reports the
// error when it returns no records, or at the next call after one that
// returned records. The error recurs at every Poll that reaches the
// damaged batch; records before it are delivered first.
func (c *Consumer) Poll(ctx context.Context) (_ []Message, err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	c.mu.Lock()
	err = c.deferred
	c.deferred = nil
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	for {
		if err := c.sync(); err != nil {
			return nil, err
		}
		msgs, err := c.fetch(ctx)
		if err != nil || len(msgs) > 0 {
			return msgs, err
		}
		if err := c.wait(ctx); err != nil {
			return nil, err
		}
	}
}

// sync checks in with the group and applies what it says.
func (c *Consumer) sync() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return fmt.Errorf("strata: consumer of group %q: %w", c.group, ErrClosed)
	}
	c.mu.Unlock()
	if c.s.closed.Load() {
		return ErrClosed
	}
	if err := c.maybeAutoCommit(); err != nil && !errors.Is(err, ErrFenced) {
		return err
	}
	res, err := c.s.groups.Sync(c.group, c.ref.MemberID)
	if errors.Is(err, group.ErrFenced) || errors.Is(err, group.ErrUnknownMember) {
		// Evicted: everything we held is someone else's now. Start over.
		c.mu.Lock()
		c.pos, c.ids, c.order = map[TopicPartition]int64{}, map[TopicPartition]TopicID{}, nil
		c.pending = map[TopicPartition]bool{}
		c.mu.Unlock()
		ref, jerr := c.s.groups.Join(c.group, c.topics)
		if jerr != nil {
			return fmt.Errorf("strata: rejoining group %q: %w", c.group, jerr)
		}
		c.mu.Lock()
		c.ref = ref
		c.mu.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("strata: group %q: %w", c.group, err)
	}
	c.mu.Lock()
	c.ref.Generation = res.Generation
	c.mu.Unlock()
	var commitErr error
	if len(res.Revoke) > 0 {
		if c.opts.OnRevoked != nil {
			c.opts.OnRevoked(c, res.Revoke)
		}
		if c.opts.AutoCommitInterval > 0 {
			// A failed commit must not keep the partitions from their new
			// owner: report it after they are released.
			if err := c.commitConsumed(res.Revoke); err != nil && !errors.Is(err, ErrFenced) {
				commitErr = err
			}
		}
		c.mu.Lock()
		for _, tp := range res.Revoke {
			delete(c.pos, tp)
			delete(c.ids, tp)
			delete(c.pending, tp)
		}
		c.mu.Unlock()
		if err := c.s.groups.Revoked(c.group, c.ref.MemberID, res.Revoke); err != nil && !errors.Is(err, group.ErrFenced) {
			return fmt.Errorf("strata: group %q: %w", c.group, err)
		}
	}
	// Position the newly assigned partitions, and those that could not be
	// positioned before (ResetNone without a commit): each one that works
	// out is announced to OnAssigned; the others stay owned and pending,
	// and every Poll says why until they can start.
	c.mu.Lock()
	todo := slices.Clone(res.Assign)
	for tp := range c.pending {
		if !slices.Contains(todo, tp) && slices.Contains(res.Owned, tp) {
			todo = append(todo, tp)
		}
	}
	c.mu.Unlock()
	var ready []TopicPartition
	var posErr error
	for _, tp := range todo {
		pos, id, err := c.startPosition(tp)
		c.mu.Lock()
		if err != nil {
			c.pending[tp] = true
			posErr = err
		} else {
			delete(c.pending, tp)
			c.pos[tp], c.ids[tp] = pos, id
			ready = append(ready, tp)
		}
		c.mu.Unlock()
	}
	if len(ready) > 0 && c.opts.OnAssigned != nil {
		slices.SortFunc(ready, TopicPartition.Compare)
		c.opts.OnAssigned(c, ready)
	}
	c.mu.Lock()
	c.order = c.order[:0]
	for _, tp := range res.Owned {
		if _, ok := c.pos[tp]; ok {
			c.order = append(c.order, tp)
		}
	}
	c.mu.Unlock()
	return errors.Join(commitErr, posErr)
}

// startPosition is where reading tp starts: the committed offset, or
// AutoOffsetReset's choice; and the id of the topic that holds it.
func (c *Consumer) startPosition(tp TopicPartition) (int64, TopicID, error) {
	t, p, err := c.s.topicPartition(tp.Topic, tp.Partition)
	if err != nil {
		return 0, TopicID{}, err
	}
	om, ok := c.s.groups.Committed(c.group, tp.Topic, tp.Partition)
	pos, err := c.opts.AutoOffsetReset.Position(tp, om.Offset, ok, p.StartOffset(), p.HighWatermark())
	if err != nil {
		return 0, TopicID{}, fmt.Errorf("strata: group %q: %w", c.group, err)
	}
	return pos, t.ID(), nil
}

// fetch reads what is there now from the owned partitions, fairly: each
// Poll starts where the previous one stopped.
func (c *Consumer) fetch(ctx context.Context) ([]Message, error) {
	// ctx is checked once: a fetch that moved a position must return what
	// it read, or a later Commit would skip records never delivered.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	order := slices.Clone(c.order)
	start := c.next
	c.mu.Unlock()
	var out []Message
	var failed error // from partitions that could not be read
	for i := range order {
		tp := order[(start+i)%len(order)]
		c.mu.Lock()
		pos, id := c.pos[tp], c.ids[tp]
		c.mu.Unlock()
		n := len(out)
		t, p, err := c.s.topicPartition(tp.Topic, tp.Partition)
		if err == nil && t.ID() != id {
			// The topic was deleted and created again: the position was
			// in the old one. Start again, as in a partition just assigned.
			if pos, id, err = c.startPosition(tp); err == nil {
				c.mu.Lock()
				c.pos[tp], c.ids[tp] = pos, id
				c.mu.Unlock()
			}
		}
		reached := pos
		if err == nil {
			// The records go straight into out, with room made for them once.
			out, reached, err = appendRecords(out, p, pos, c.opts.MaxPollRecords-n, func(r Record) Message {
				return Message{Topic: tp.Topic, Partition: tp.Partition, Record: r}
			})
		}
		if err != nil {
			out = out[:n] // what moved no position is not delivered
		}
		if errors.Is(err, ErrOffsetOutOfRange) {
			// Retention moved the start past our position: reset.
			np, rerr := c.opts.AutoOffsetReset.Position(tp, pos, false, p.StartOffset(), p.HighWatermark())
			if rerr != nil {
				failed = errors.Join(failed, fmt.Errorf("strata: group %q: %w", c.group, rerr))
				continue
			}
			c.mu.Lock()
			c.pos[tp] = np
			c.mu.Unlock()
			continue
		}
		if err != nil {
			// The other partitions are read on; the error is reported once
			// what they gave is delivered, and recurs while it lasts.
			failed = errors.Join(failed, err)
			continue
		}
		if reached > pos {
			// Past the records delivered, and past what the read stepped
			// over after them (a transaction's marker, compacted offsets),
			// so a commit covers them and the lag can reach zero.
			c.mu.Lock()
			c.pos[tp] = reached
			if len(out) > n {
				c.next = (start + i + 1) % len(order)
			}
			c.mu.Unlock()
		}
		if len(out) >= c.opts.MaxPollRecords {
			break
		}
	}
	if failed != nil && len(out) == 0 {
		return nil, failed
	}
	c.mu.Lock()
	c.deferred = failed
	c.mu.Unlock()
	return out, nil
}

// wait blocks until one of the owned partitions has records past the
// consumer's position, PollWait passes, or ctx ends.
func (c *Consumer) wait(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, c.opts.PollWait)
	defer cancel()
	c.mu.Lock()
	type want struct {
		tp  TopicPartition
		pos int64
	}
	var wants []want
	for _, tp := range c.order {
		wants = append(wants, want{tp, c.pos[tp]})
	}
	c.mu.Unlock()
	woke := make(chan struct{}, 1)
	var wg sync.WaitGroup
	for _, w := range wants {
		p, err := c.s.partition(w.tp.Topic, w.tp.Partition)
		if err != nil {
			continue
		}
		wg.Go(func() {
			if p.Wait(wctx, w.pos) == nil {
				select {
				case woke <- struct{}{}:
				default:
				}
				cancel()
			}
		})
	}
	select {
	case <-woke:
	case <-wctx.Done():
	}
	cancel()
	wg.Wait()
	return ctx.Err()
}

// Commit commits, for every partition the consumer owns, its position: the
// offset after the last record Poll returned from it, or past what Poll
// stepped over after that record (a transaction's marker, offsets
// compaction removed), as Kafka's consumers commit. Call it after
// processing them (at-least-once). A consumer that was evicted gets ErrFenced: its
// partitions belong to others now, and they will redeliver what it did not
// commit.
func (c *Consumer) Commit(ctx context.Context) (err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	parts := slices.Clone(c.order)
	c.mu.Unlock()
	return c.commitConsumed(parts)
}

// CommitOffsets commits explicit offsets (the next offset to read) for
// partitions the consumer owns.
func (c *Consumer) CommitOffsets(ctx context.Context, offsets map[TopicPartition]int64) (err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	now := c.s.opts.Now()
	commits := make(map[TopicPartition]OffsetAndMetadata, len(offsets))
	for tp, off := range offsets {
		id, err := c.s.checkCommit(tp.Topic, tp.Partition, off)
		if err != nil {
			return err
		}
		commits[tp] = OffsetAndMetadata{Offset: off, CommitTime: now, TopicID: id}
	}
	c.mu.Lock()
	ref := c.ref
	c.mu.Unlock()
	if err := c.s.groups.Commit(c.group, ref, commits); err != nil {
		return fmt.Errorf("strata: commit of group %q: %w", c.group, err)
	}
	return nil
}

// commitConsumed commits the consumed positions of parts, each with the id
// of the topic it was read from. The positions come from reads, so they are
// not range-checked again: one partition whose start moved past an unread
// position (retention) must not keep the others from committing.
// Partitions of topics deleted (or deleted and created again) meanwhile
// are skipped. A closed store is ErrClosed.
func (c *Consumer) commitConsumed(parts []TopicPartition) error {
	if c.s.closed.Load() {
		return fmt.Errorf("strata: commit of group %q: %w", c.group, ErrClosed)
	}
	now := c.s.opts.Now()
	commits := map[TopicPartition]OffsetAndMetadata{}
	c.mu.Lock()
	for _, tp := range parts {
		if off, ok := c.pos[tp]; ok {
			commits[tp] = OffsetAndMetadata{Offset: off, CommitTime: now, TopicID: c.ids[tp]}
		}
	}
	ref := c.ref
	c.mu.Unlock()
	for tp, om := range commits {
		if t, _, err := c.s.topicPartition(tp.Topic, tp.Partition); err != nil || t.ID() != om.TopicID {
			delete(commits, tp)
		}
	}
	if len(commits) == 0 {
		return nil
	}
	if err := c.s.groups.Commit(c.group, ref, commits); err != nil {
		return fmt.Errorf("strata: commit of group %q: %w", c.group, err)
	}
	return nil
}

// maybeAutoCommit commits what was consumed when AutoCommitInterval has
// passed.
func (c *Consumer) maybeAutoCommit() error {
	if c.opts.AutoCommitInterval <= 0 {
		return nil
	}
	now := c.s.opts.Now()
	c.mu.Lock()
	due := now.Sub(c.lastAuto) >= c.opts.AutoCommitInterval
	if due {
		c.lastAuto = now
	}
	parts := slices.Clone(c.order)
	c.mu.Unlock()
	if !due {
		return nil
	}
	return c.commitConsumed(parts)
}

// Close leaves the group: OnRevoked runs for the partitions the consumer
// owns (commit there), what was consumed is committed if auto-commit is on,
// and the partitions go to the remaining consumers at once. Closing twice
// is a no-op.
func (c *Consumer) Close() (err error) {
	defer wrapErr(&err)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	owned := slices.Clone(c.order)
	id := c.ref.MemberID
	c.mu.Unlock()
	member := slices.ContainsFunc(c.s.groups.Members(c.group), func(m group.MemberInfo) bool { return m.ID == id })
	if !member {
		owned = nil // evicted: the partitions are someone else's now
	}
	if len(owned) > 0 && c.opts.OnRevoked != nil {
		c.opts.OnRevoked(c, owned)
	}
	if c.opts.AutoCommitInterval > 0 {
		err = c.commitConsumed(owned)
	}
	if lerr := c.s.groups.Leave(c.group, id); lerr != nil && !errors.Is(lerr, group.ErrFenced) && !errors.Is(lerr, group.ErrUnknownMember) {
		err = errors.Join(err, lerr)
	}
	return err
}
