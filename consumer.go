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
	// max.poll.records); negative is ErrInvalidConfig.
	MaxPollRecords int
	// OnAssigned runs in Poll when partitions are handed to this consumer,
	// before any of their records are returned. It may Seek or Pause them.
	// Its ctx, like every callback's, is the consumer's own, not the one
	// given to Poll: it ends when Close returns (see OnRevoked).
	OnAssigned func(ctx context.Context, c *Consumer, parts []TopicPartition)
	// OnRevoked runs in Poll (or Close) when partitions are taken away,
	// before the group hands them to another consumer: commit what was
	// processed there (c.Commit(ctx)), or lose it to redelivery. In Close,
	// ctx is a fresh context bounded by CloseTimeout, so a commit made
	// with it lands even when the application's own context has already
	// ended (the usual way to shut down).
	OnRevoked func(ctx context.Context, c *Consumer, parts []TopicPartition)
	// OnLost runs in Poll (or Close) when the consumer finds it was
	// evicted (its session timed out, or it held a partition it was told
	// to revoke for longer than Options.RebalanceTimeout): parts were
	// taken from it without a revoke and may already be read by another
	// consumer, so commits of them fail with ErrFenced. Drop what was
	// processed of them but not committed; it will be delivered again.
	// When OnLost is nil, OnRevoked runs instead (as franz-go's kgo does
	// without OnPartitionsLost), and its commits fail with ErrFenced.
	OnLost func(ctx context.Context, c *Consumer, parts []TopicPartition)
	// CloseTimeout bounds the context Close gives OnRevoked and OnLost.
	// Default 30 s, as Kafka's consumer bounds its close
	// (KafkaConsumer.DEFAULT_CLOSE_TIMEOUT_MS); negative is
	// ErrInvalidConfig.
	CloseTimeout time.Duration
	// AutoCommitInterval, if positive, commits what Poll returned at most
	// this often, at the start of a Poll, and also when partitions are
	// revoked and at Close — after the records were handed out, not after
	// they were processed. Default off: the
	// documented pattern is process, then Commit (at least once).
	AutoCommitInterval time.Duration
	// PollWait is how long Poll waits for records before it checks in with
	// the group again (its heartbeat), when ctx allows. Default 100 ms;
	// negative is ErrInvalidConfig.
	PollWait time.Duration
	// Isolation is what the consumer reads of transactions: ReadCommitted
	// reads up to the last stable offset and skips aborted records
	// (Kafka's isolation.level=read_committed), and starts a partition
	// newly assigned only once no transaction has offsets of the group
	// pending for it (Kafka's require_stable), so that it does not read
	// again what a transaction about to commit has consumed. Default: the
	// store's Options.Isolation.
	Isolation Isolation
}

// withDefaults fills in the defaults of the zero fields, and refuses,
// with ErrInvalidConfig, a negative MaxPollRecords, CloseTimeout or
// PollWait, an AutoOffsetReset that is none of the three and an unknown
// Isolation.
func (o ConsumerOptions) withDefaults() (ConsumerOptions, error) {
	switch {
	case o.AutoOffsetReset < ResetLatest || o.AutoOffsetReset > ResetNone:
		return o, fmt.Errorf("AutoOffsetReset %v is not ResetLatest, ResetEarliest or ResetNone: %w", o.AutoOffsetReset, ErrInvalidConfig)
	case o.MaxPollRecords < 0:
		return o, fmt.Errorf("MaxPollRecords %d is negative (0 means the default, 500): %w", o.MaxPollRecords, ErrInvalidConfig)
	case o.CloseTimeout < 0:
		return o, fmt.Errorf("CloseTimeout %v is negative (0 means the default, 30s): %w", o.CloseTimeout, ErrInvalidConfig)
	case o.PollWait < 0:
		return o, fmt.Errorf("PollWait %v is negative (0 means the default, 100ms): %w", o.PollWait, ErrInvalidConfig)
	}
	if err := checkIsolation(o.Isolation); err != nil {
		return o, err
	}
	if o.MaxPollRecords == 0 {
		o.MaxPollRecords = 500
	}
	if o.PollWait == 0 {
		o.PollWait = 100 * time.Millisecond
	}
	if o.CloseTimeout == 0 {
		o.CloseTimeout = 30 * time.Second
	}
	return o, nil
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
// (Poll, Commit and Close from the same one); its methods are nonetheless
// safe to call from others (Pause, Resume and Seek from another goroutine
// wake a Poll that waits). Many Consumers, in one group or several, may run
// at once. After Close, every method that returns an error returns
// ErrClosed.
type Consumer struct {
	s      *Store
	group  string
	topics []string
	opts   ConsumerOptions
	ctx    context.Context // the callbacks' in Poll; ends when Close returns
	cancel context.CancelFunc
	wake   chan struct{} // a Pause, Resume or Seek for a waiting Poll

	mu       sync.Mutex
	ref      group.MemberRef
	pos      map[TopicPartition]int64   // next offset to fetch (after what Poll returned), per owned partition
	ids      map[TopicPartition]TopicID // the id of the topic pos was found in, per owned partition
	pending  map[TopicPartition]bool    // owned, but no start position yet (or one a Seek gave it)
	paused   map[TopicPartition]bool    // not fetched until resumed, owned or not
	order    []TopicPartition           // owned partitions with a position, for fair polling
	next     int                        // where the next Poll starts in order
	closing  bool                       // Close has begun: no more Poll
	closed   bool                       // Close has returned: no more anything
	lastAuto time.Time
	deferred error // a partition's read error, for the next Poll: it came with other partitions' records
}

// Consumer joins group as a new consumer subscribed to topics. The topics
// need not exist yet: partitions are assigned as they appear. Call Poll
// often — it is also the consumer's heartbeat: one that does not poll for
// longer than Options.SessionTimeout is evicted, its partitions go to the
// others and its later commits fail with ErrFenced. A group whose members
// are Kafka clients served over the wire (package broker) takes no
// Consumer: ErrGroupClaimed.
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
	opts, err = opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("strata: consumer of group %q: %w", groupName, err)
	}
	opts.Isolation = s.isolation(opts.Isolation)
	ref, err := s.groups.Join(groupName, topics)
	if err != nil {
		return nil, fmt.Errorf("strata: joining group %q: %w", groupName, err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	return &Consumer{
		s: s, group: groupName, topics: slices.Clone(topics), opts: opts, ref: ref,
		ctx: cctx, cancel: cancel, wake: make(chan struct{}, 1),
		pos: map[TopicPartition]int64{}, ids: map[TopicPartition]TopicID{},
		pending: map[TopicPartition]bool{}, paused: map[TopicPartition]bool{},
		lastAuto: s.opts.Now(),
	}, nil
}

// MemberID returns the consumer's id in its group.
func (c *Consumer) MemberID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ref.MemberID
}

// Assignment returns the partitions the consumer owns and reads now
// (paused ones included), sorted; nil after Close.
func (c *Consumer) Assignment() []TopicPartition {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.order)
}

// Poll returns records from the consumer's partitions, up to
// MaxPollRecords, waiting until there are some or ctx ends (then it returns
// ctx.Err()). Each Poll first checks in with the group: partitions to give
// up are revoked (OnRevoked runs, then they are released), partitions lost
// to an eviction are announced (OnLost), and new ones assigned (OnAssigned
// runs; reading starts at the committed offset or per AutoOffsetReset).
// Paused partitions return nothing, but Poll still checks in with the
// group while they are all paused. The records' bytes are the caller's.
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
		if err := c.sync(c.ctx); err != nil {
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

// checkOpen returns ErrClosed once Close has returned (or, with polling
// set, once it has begun: the callbacks Close runs may still commit and
// seek, but not poll).
func (c *Consumer) checkOpenLocked(polling bool) error {
	if c.closed || (polling && c.closing) {
		return fmt.Errorf("strata: consumer of group %q: %w", c.group, ErrClosed)
	}
	if c.s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// checkOpen is checkOpenLocked for a caller that does not hold c.mu.
func (c *Consumer) checkOpen(polling bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checkOpenLocked(polling)
}

// sync checks in with the group and applies what it says; the callbacks
// get ctx.
func (c *Consumer) sync(ctx context.Context) error {
	if err := c.checkOpen(true); err != nil {
		return err
	}
	if err := c.maybeAutoCommit(); err != nil && !errors.Is(err, ErrFenced) {
		return err
	}
	res, err := c.s.groups.Sync(c.group, c.ref.MemberID)
	if errors.Is(err, group.ErrFenced) || errors.Is(err, group.ErrUnknownMember) {
		// Evicted: everything we held is someone else's now. Say so (a
		// commit there is fenced), then start over. Paused partitions
		// stay paused.
		c.mu.Lock()
		lost := c.heldLocked()
		c.mu.Unlock()
		c.onLost(ctx, lost)
		c.mu.Lock()
		c.pos, c.ids, c.order = map[TopicPartition]int64{}, map[TopicPartition]TopicID{}, nil
		c.pending = map[TopicPartition]bool{}
		c.mu.Unlock()
		if c.s.closed.Load() {
			// Fenced by Close, which ended every membership: joining
			// again would leave one that no one records the end of.
			return ErrClosed
		}
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
		return err // the group's errors name the member and the group
	}
	c.mu.Lock()
	c.ref.Generation = res.Generation
	c.mu.Unlock()
	var commitErr error
	if len(res.Revoke) > 0 {
		if c.opts.OnRevoked != nil {
			c.opts.OnRevoked(ctx, c, res.Revoke)
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
			return err
		}
	}
	// Position the newly assigned partitions, and those that could not be
	// positioned before (ResetNone without a commit): each one that works
	// out is announced to OnAssigned; the others stay owned and pending,
	// and every Poll says why until they can start. A pending partition a
	// Seek positioned starts there.
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
		c.mu.Lock()
		_, sought := c.pos[tp]
		sought = sought && c.pending[tp]
		c.mu.Unlock()
		var pos int64
		var id TopicID
		var err error
		if !sought {
			pos, id, err = c.startPosition(tp)
		}
		c.mu.Lock()
		switch {
		case errors.Is(err, errUnstableOffset):
			c.pending[tp] = true // a later Poll starts it, once the transaction ends
		case err != nil:
			c.pending[tp] = true
			posErr = err
		case sought:
			delete(c.pending, tp)
			ready = append(ready, tp)
		default:
			delete(c.pending, tp)
			c.pos[tp], c.ids[tp] = pos, id
			ready = append(ready, tp)
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	c.order = c.order[:0]
	for _, tp := range res.Owned {
		if _, ok := c.pos[tp]; ok && !c.pending[tp] {
			c.order = append(c.order, tp)
		}
	}
	c.mu.Unlock()
	if len(ready) > 0 && c.opts.OnAssigned != nil {
		slices.SortFunc(ready, TopicPartition.Compare)
		c.opts.OnAssigned(ctx, c, ready)
	}
	return errors.Join(commitErr, posErr)
}

// ownsLocked reports whether c owns tp, positioned or pending.
func (c *Consumer) ownsLocked(tp TopicPartition) bool {
	_, ok := c.pos[tp]
	return ok || c.pending[tp]
}

// heldLocked returns every partition c owns, positioned or pending, sorted.
func (c *Consumer) heldLocked() []TopicPartition {
	held := slices.Clone(c.order)
	for tp := range c.pending {
		if !slices.Contains(held, tp) {
			held = append(held, tp)
		}
	}
	slices.SortFunc(held, TopicPartition.Compare)
	return held
}

// onLost runs OnLost for parts, or OnRevoked when OnLost is nil.
func (c *Consumer) onLost(ctx context.Context, parts []TopicPartition) {
	switch {
	case len(parts) == 0:
	case c.opts.OnLost != nil:
		c.opts.OnLost(ctx, c, parts)
	case c.opts.OnRevoked != nil:
		c.opts.OnRevoked(ctx, c, parts)
	}
}

// errUnstableOffset means a partition's committed offset cannot be used
// yet: a transaction has an offset of the group pending for it (Kafka's
// UNSTABLE_OFFSET_COMMIT).
var errUnstableOffset = errors.New("strata: a transaction has an offset pending for the partition")

// startPosition is where reading tp starts: the committed offset, or
// AutoOffsetReset's choice (the end being the last stable offset under
// ReadCommitted); and the id of the topic that holds it. Under
// ReadCommitted it is errUnstableOffset while a transaction has an offset
// of the group pending for tp.
func (c *Consumer) startPosition(tp TopicPartition) (int64, TopicID, error) {
	t, p, err := c.s.topicPartition(tp.Topic, tp.Partition)
	if err != nil {
		return 0, TopicID{}, err
	}
	if c.opts.Isolation == ReadCommitted && c.s.groups.PendingTxn(c.group, tp.Topic, tp.Partition) {
		return 0, TopicID{}, errUnstableOffset
	}
	om, ok := c.s.groups.Committed(c.group, tp.Topic, tp.Partition)
	start, hw := p.StartOffset(), p.HighWatermark()
	if ok && om.Offset >= start && om.Offset <= hw {
		// A commit up to the high watermark stands, whatever the level:
		// a read_committed read from past the last stable offset waits.
		return om.Offset, t.ID(), nil
	}
	pos, err := c.opts.AutoOffsetReset.Position(tp, om.Offset, ok, start, readEnd(p, c.opts.Isolation))
	if err != nil {
		return 0, TopicID{}, fmt.Errorf("strata: group %q: %w", c.group, err)
	}
	return pos, t.ID(), nil
}

// fetch reads what is there now from the owned partitions that are not
// paused, fairly: each Poll starts where the previous one stopped.
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
		pos, id, paused := c.pos[tp], c.ids[tp], c.paused[tp]
		c.mu.Unlock()
		if paused {
			continue
		}
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
			out, reached, err = appendRecords(out, p, c.opts.Isolation, pos, c.opts.MaxPollRecords-n, func(r Record) Message {
				return Message{Topic: tp.Topic, Partition: tp.Partition, Record: r}
			})
		}
		if err != nil {
			out = out[:n] // what moved no position is not delivered
		}
		if errors.Is(err, ErrOffsetOutOfRange) {
			// Retention moved the start past our position: reset.
			np, rerr := c.opts.AutoOffsetReset.Position(tp, pos, false, p.StartOffset(), readEnd(p, c.opts.Isolation))
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

// wait blocks until one of the owned partitions that are not paused has
// records past the consumer's position, a Pause, Resume or Seek wakes it,
// PollWait passes, or ctx ends.
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
		if !c.paused[tp] {
			wants = append(wants, want{tp, c.pos[tp]})
		}
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
			if waitEnd(wctx, p, c.opts.Isolation, w.pos) == nil {
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
	case <-c.wake:
	case <-wctx.Done():
	}
	cancel()
	wg.Wait()
	return ctx.Err()
}

// poke wakes a Poll that waits, so that it sees a Pause, Resume or Seek.
func (c *Consumer) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Close leaves the group: OnRevoked runs for the partitions the consumer
// owns (commit there, with the ctx it is given: it is bounded by
// CloseTimeout, not by any context of the application's), what was
// consumed is committed if auto-commit is on, and the partitions go to the
// remaining consumers at once. A consumer that finds it was evicted runs
// OnLost instead, as does one closed after its Store, whose Close ended
// the membership of its consumers (nothing can be committed any more). Closing twice is a no-op; every other method then
// returns ErrClosed.
func (c *Consumer) Close() (err error) {
	defer wrapErr(&err)
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil
	}
	c.closing = true
	owned := slices.Clone(c.order)
	held := c.heldLocked()
	id := c.ref.MemberID
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.CloseTimeout)
	defer cancel()
	defer c.cancel()
	member := slices.ContainsFunc(c.s.groups.Members(c.group), func(m group.MemberInfo) bool { return m.ID == id })
	switch {
	case !member:
		// Evicted: the partitions are someone else's now.
		c.onLost(ctx, held)
	default:
		if len(owned) > 0 && c.opts.OnRevoked != nil {
			c.opts.OnRevoked(ctx, c, owned)
		}
		if c.opts.AutoCommitInterval > 0 {
			err = c.commitConsumed(owned)
		}
	}
	if lerr := c.s.groups.Leave(c.group, id); lerr != nil && !errors.Is(lerr, group.ErrFenced) && !errors.Is(lerr, group.ErrUnknownMember) {
		err = errors.Join(err, lerr)
	}
	c.mu.Lock()
	c.closed = true
	c.pos, c.ids, c.order = map[TopicPartition]int64{}, map[TopicPartition]TopicID{}, nil
	c.pending = map[TopicPartition]bool{}
	c.mu.Unlock()
	return err
}
