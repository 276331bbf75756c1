package strata

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/topic"
)

// Producer batches records as Kafka's producer does, so that many small
// writes become few large appends. It is safe for concurrent use.
//
// Produce routes each record as Append does (murmur2 of the key, a sticky
// partition for records without a key) and adds it to its partition's open
// batch. A batch is appended, as one batch, when it reaches BatchBytes
// or Linger after its first record, whichever comes first (Kafka's
// batch.size and linger.ms); Flush and Close append every open batch at
// once. Records without a key stick to one partition until a batch holding
// them is sent, then move to another (KIP-480). A record's callback runs
// after its batch is appended, with the record's Position or the append's
// error; per partition, records are appended and their callbacks run in the
// order they were produced, so a key keeps its order.
//
// Produce copies the record (Kafka serializes it at send), so the caller
// may reuse its bytes at once, and it fails at once for a record that no
// batch could take. The first append error of a record produced without a
// callback is returned by the next Flush or Close, so none goes unseen.
//
// One goroutine, started by Store.Producer and stopped by Close, appends
// the batches and runs the callbacks, one at a time. It encodes (and
// compresses) each batch before appending it, unless a Produce waiting for
// room already did: a Produce that must wait encodes the last batch queued
// instead of sleeping, so that producing goroutines share the encoding
// with the sender (as Kafka's Java producer compresses in the caller's
// thread). Callbacks should be
// quick; they must not call Flush or Close (which wait for them), and a
// Produce from a callback can wait forever for room. Close the Producer
// before the Store: batches appended after the Store closes fail with
// ErrClosed.
//
// The durability of a produced record is the Store's once its callback has
// run (or Flush has returned): before that it is only in memory.
//
// # Idempotence
//
// A Producer is idempotent unless ProducerOptions.DisableIdempotence says
// otherwise (as Kafka's producer is by default since Kafka 3.0): at its
// first Produce it takes a producer id of its own from the store, and it
// stamps every batch with that id, an epoch (0 to begin with) and the
// sequence number of the batch's first record in its partition, as Kafka's
// producer does. Each partition remembers its producers' last 5 batches, so
// a batch appended twice is written once. A batch whose append fails with
// an I/O error (a full disk, a failed write, which leave the partition as
// it was; not ErrClosed) is appended again, with the same sequence, every
// RetryBackoff until it succeeds, DeliveryTimeout has passed since its
// first record was produced, or Close is called. Should an attempt that reported an error
// have written the batch all the same, the next one writes nothing and is
// answered with the offsets the batch was written at: its callbacks get
// those original Positions and a nil error, as if the first attempt had
// answered. A batch that fails for good moves the producer to its next
// epoch, every sequence back at 0 (Kafka's KIP-360), so that the batches
// after it are not refused for the gap it leaves.
//
// Idempotence does not cover a record that the caller produces again
// (after its callback's error, or after a Flush whose ctx ended): that is a
// new record. Nor does it outlive the Producer: a new Producer, and the
// same code after the Store is opened again, get a new producer id, so a
// batch produced again across a restart is written again. A partition
// forgets a producer that has appended nothing to it for a day (Kafka's
// producer.id.expiration.ms), long after any retry of a Producer's.
type Producer struct {
	s     *Store
	opts  ProducerOptions
	codec log.Compression // opts.Compression's
	bad   error           // what is wrong with opts, for every Produce

	// ids is the producer id's allocation, nil if the producer is not
	// idempotent.
	ids *producerIdentity
	// afterAppend, set by tests only, may replace the error of each
	// append attempt.
	afterAppend func(error) error

	encodedAhead atomic.Int64 // batches a waiting Produce encoded

	wake    chan struct{} // capacity 1: there may be work for the sender
	closing chan struct{} // closed by Close: Produce stops waiting for room
	exited  chan struct{} // closed when the sender returns

	mu struct {
		sync.Mutex
		closed bool
		topics map[string]*topicBatches
		// lingering holds every open batch in the order they were opened,
		// which with one Linger is the order of their deadlines; batches
		// already shipped are skipped when they reach the front.
		lingering []*batch
		// ready is the sender's queue: shipped batches and flush marks.
		ready []*batch
		// records and bytes are produced and not yet appended.
		records, bytes int
		// room is closed when records or bytes go down; nil when nobody
		// waits for room.
		room chan struct{}
		// err is the first append error of a record that had no callback
		// since the last Flush, for the next Flush or Close to return.
		err error
		// unencoded holds the shipped batches nobody has started to
		// encode, in the order they were shipped: the sender takes them
		// from the front, a Produce waiting for room from the back.
		unencoded []*batch
		// encoded is signalled when a Produce finishes encoding a batch.
		encoded sync.Cond
		// id and epoch stamp the batches of an idempotent producer (id is
		// -1 until the first Produce); broken, once set, fails every batch
		// (no producer id could be had for a new epoch).
		id     int64
		epoch  int16
		broken error
	}
}

// topicBatches is the producer's state for one topic.
type topicBatches struct {
	name     string
	t        *topic.Topic
	open     []*batch // per partition; nil when none is open
	maxBatch int      // the topic's MaxBatchBytes
	skew     time.Duration
	checkTs  bool // CreateTime with a skew limit
	needKey  bool // compacted: a record without a key is refused
	// appendTime is set for a LogAppendTime topic, whose batches are
	// stamped when they are encoded: only the sender encodes them, just
	// before it appends them, so that their times rise with their offsets.
	appendTime bool
	// seq is, per partition, the sequence number of the next batch an
	// idempotent producer ships there.
	seq []int32
}

// batch is one partition's batch, or (with done set) a flush mark in the
// sender's queue.
type batch struct {
	tb      *topicBatches
	part    int
	opened  time.Time // monotonic: the linger deadline is opened + Linger
	baseTs  int64     // the first record's timestamp, ms
	size    int       // encoded size
	keyless bool      // holds a record without a key
	shipped bool      // in the sender's queue (or sent)
	a       *arena
	// stamp is what an idempotent producer stamps the batch with, set when
	// it is shipped (and again if the producer moves to a new epoch before
	// it is sent).
	stamp stamp

	// ahead is set when a Produce waiting for room took the batch to
	// encode; it has finished once encBuf is set, and enc holds the batch
	// encoded into *encBuf.
	ahead  bool
	enc    encoded
	encBuf *[]byte

	done chan struct{} // a flush mark: closed when everything before it is done
	err  error         // a flush mark: the error for Flush or Close
	stop bool          // Close's mark: the sender returns after it
}

// Producer returns a new Producer that appends to s, with opts (zero
// fields mean their defaults). It starts the producer's goroutine: Close
// the Producer to stop it.
func (s *Store) Producer(opts ProducerOptions) *Producer {
	p := &Producer{
		s:       s,
		opts:    opts.withDefaults(),
		wake:    make(chan struct{}, 1),
		closing: make(chan struct{}),
		exited:  make(chan struct{}),
	}
	p.mu.topics = map[string]*topicBatches{}
	p.mu.encoded.L = &p.mu.Mutex
	p.mu.id = -1
	if !p.opts.DisableIdempotence {
		p.ids = new(producerIdentity)
	}
	p.codec, p.bad = p.opts.codec()
	go p.run()
	return p
}

// Produce adds a record to its partition's batch and returns without
// waiting for the batch to be appended; callback (which may be nil) is then
// called with the record's Position, or with the error that failed its
// batch and Offset -1.
//
// Produce copies the record's Key, Value and Headers: the caller may reuse
// them as soon as it returns. A zero Timestamp is set to the store's clock
// now, at Produce, as Kafka's producer stamps a record when it is sent.
//
// Produce blocks only for back-pressure: when MaxBufferedRecords or
// MaxBufferedBytes are buffered, it appends every open batch, encodes
// queued batches for the sender while there are any, and waits for room
// until ctx ends. It fails at once, without calling callback, for an
// ended ctx, an unknown topic (ErrUnknownTopic), a record whose batch alone
// would be over the topic's MaxBatchBytes (ErrBatchTooLarge), a timestamp
// too far ahead (ErrTimestampTooFarAhead), a record without a key for a
// compacted topic (ErrNoKey), and a closed Producer or Store
// (ErrClosed), and options that name no codec or a level it does not take
// (ErrInvalidConfig), and when an idempotent producer cannot have its
// producer id at its first Produce (the store's producer-ids.json cannot
// be written, or is damaged: ErrCorrupt; the next Produce tries again). So
// callback is called exactly once if Produce returns nil, and never
// otherwise.
func (p *Producer) Produce(ctx context.Context, topicName string, r Record, callback func(Position, error)) (err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.closed() || p.s.closed.Load() {
		return ErrClosed // before any check of the input or the options
	}
	if err := p.s.checkWritable("produce"); err != nil {
		return err
	}
	if p.bad != nil {
		return p.bad
	}
	t, err := p.s.userTopic("produce", topicName)
	if err != nil {
		return err
	}
	if err := p.ensureID(); err != nil {
		return err
	}
	stamped := r.Timestamp.IsZero()
	if stamped {
		r.Timestamp = p.s.opts.Now()
	}
	ts := r.Timestamp.UnixMilli()
	fields := log.RecordFieldsSize(&r)
	alone := log.RecordSize(fields, 0, 0)
	part := -1
	if r.Key != nil {
		part = t.Route(r.Key)
	}

	p.mu.Lock()
	for {
		if p.mu.closed {
			p.mu.Unlock()
			return ErrClosed
		}
		tb := p.topicLocked(topicName, t)
		if err := tb.check(&r, ts, alone, stamped, p.s.opts.Now); err != nil {
			p.mu.Unlock()
			return err
		}
		if p.mu.records > 0 && (p.mu.records >= p.opts.MaxBufferedRecords || p.mu.bytes+alone > p.opts.MaxBufferedBytes) {
			// As Kafka's producer does when its buffer is exhausted, make
			// every batch sendable, then wait for room: first by encoding
			// (compressing) the batch the sender will reach last, on this
			// goroutine, so that the sender only appends it.
			p.shipAllLocked()
			if ctx.Err() == nil && p.encodeAheadLocked() {
				continue
			}
			if p.mu.room == nil {
				p.mu.room = make(chan struct{})
			}
			room := p.mu.room
			p.mu.Unlock()
			select {
			case <-room:
			case <-ctx.Done():
				return ctx.Err()
			case <-p.closing:
				return ErrClosed
			}
			p.mu.Lock()
			continue
		}
		at := part
		if at < 0 {
			at = t.Route(nil)
		}
		if at >= len(tb.open) {
			continue // CreatePartitions added partitions since topicLocked
		}
		b := tb.open[at]
		limit := min(p.opts.BatchBytes, tb.maxBatch)
		if b != nil && b.size+log.RecordSize(fields, int32(len(b.a.recs)), ts-b.baseTs) > limit {
			// The record does not fit: send the batch and route again, as
			// a key-less record now goes to a new sticky partition.
			p.shipLocked(b)
			continue
		}
		if b == nil {
			b = p.openLocked(tb, at, ts)
		}
		size := log.RecordSize(fields, int32(len(b.a.recs)), ts-b.baseTs)
		b.a.add(&r, callback)
		b.size += size
		b.keyless = b.keyless || r.Key == nil
		p.mu.records++
		p.mu.bytes += size
		if b.size >= limit {
			p.shipLocked(b)
		}
		p.mu.Unlock()
		return nil
	}
}

// check returns the error for a record that no batch of tb can take.
func (tb *topicBatches) check(r *Record, ts int64, alone int, stamped bool, now func() time.Time) error {
	if size := log.BatchHeaderSize + alone; size > tb.maxBatch {
		return fmt.Errorf("strata: record of %d bytes (in a batch of its own) for %s is over the limit of %d: %w",
			size, tb.name, tb.maxBatch, ErrBatchTooLarge)
	}
	if tb.needKey && r.Key == nil {
		return fmt.Errorf("strata: record without a key for %s, which is compacted: %w", tb.name, ErrNoKey)
	}
	if tb.checkTs && !stamped {
		if limit := now().Add(tb.skew); ts > limit.UnixMilli() {
			return fmt.Errorf("strata: record for %s is stamped %s, more than %v ahead of the clock: %w",
				tb.name, r.Timestamp.UTC().Format(time.RFC3339Nano), tb.skew, ErrTimestampTooFarAhead)
		}
	}
	return nil
}

// topicLocked returns the producer's state for topic t, made fresh when
// the topic is new to it or was deleted and created again, and grown when
// CreatePartitions added partitions.
func (p *Producer) topicLocked(name string, t *topic.Topic) *topicBatches {
	tb := p.mu.topics[name]
	if tb != nil && tb.t == t {
		if n := t.NumPartitions(); n > len(tb.open) {
			tb.open = append(tb.open, make([]*batch, n-len(tb.open))...)
			if tb.seq != nil {
				tb.seq = append(tb.seq, make([]int32, n-len(tb.seq))...)
			}
		}
		return tb
	}
	if tb != nil {
		for _, b := range tb.open {
			if b != nil {
				p.shipLocked(b)
			}
		}
	}
	cfg := t.Partitions()[0].Config()
	tb = &topicBatches{
		name:     name,
		t:        t,
		open:     make([]*batch, t.NumPartitions()),
		maxBatch: cfg.MaxBatchBytes,
		skew:     cfg.MaxTimestampSkew,
		checkTs:  cfg.TimestampType == log.CreateTime && cfg.MaxTimestampSkew >= 0,
		needKey:  t.Compacted(),

		appendTime: cfg.TimestampType == log.LogAppendTime,
	}
	if p.ids != nil {
		tb.seq = make([]int32, len(tb.open))
	}
	p.mu.topics[name] = tb
	return tb
}

// openLocked opens a batch for a partition of tb, whose first record has
// timestamp ts.
func (p *Producer) openLocked(tb *topicBatches, part int, ts int64) *batch {
	b := &batch{tb: tb, part: part, opened: time.Now(), baseTs: ts, size: log.BatchHeaderSize, a: newArena(p.opts.BatchBytes)}
	tb.open[part] = b
	p.mu.lingering = append(p.mu.lingering, b)
	if len(p.mu.lingering) == 1 {
		p.wakeSender() // to set its timer
	}
	return b
}

// shipLocked closes batch b and queues it for the sender. If b held
// key-less records and its partition is still the sticky one, the sticky
// partition moves on.
func (p *Producer) shipLocked(b *batch) {
	b.shipped = true
	if p.ids != nil {
		p.stampLocked(b)
	} else {
		b.stamp = noStamp
	}
	if b.tb.open[b.part] == b {
		b.tb.open[b.part] = nil
	}
	if b.keyless && b.tb.t.Route(nil) == b.part {
		b.tb.t.NextBatch()
	}
	p.mu.ready = append(p.mu.ready, b)
	p.mu.unencoded = append(p.mu.unencoded, b)
	p.wakeSender()
}

// encodeAheadLocked encodes the last shipped batch nobody has started to
// encode, releasing the mutex meanwhile, and reports whether there was
// one. A Produce waiting for room calls it, so that the goroutines that
// produce share the encoding (and compression) with the sender instead of
// sleeping.
func (p *Producer) encodeAheadLocked() bool {
	u := p.mu.unencoded
	if len(u) == 0 || u[len(u)-1].tb.appendTime {
		return false
	}
	b := u[len(u)-1]
	u[len(u)-1] = nil
	p.mu.unencoded = u[:len(u)-1]
	b.ahead = true
	st := b.stamp
	p.mu.Unlock()
	buf := encodeBuffers.Get().(*[]byte)
	e := p.encode(b, st, (*buf)[:0])
	p.mu.Lock()
	b.enc, b.encBuf = e, buf
	p.encodedAhead.Add(1)
	p.mu.encoded.Broadcast()
	return true
}

// encodeBuffers recycles the buffers batches are encoded into.
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

// shipAllLocked ships every open batch.
func (p *Producer) shipAllLocked() {
	for i, b := range p.mu.lingering {
		if !b.shipped {
			p.shipLocked(b)
		}
		p.mu.lingering[i] = nil
	}
	p.mu.lingering = p.mu.lingering[:0]
}

// expireLocked ships the batches that have lingered long enough by now.
func (p *Producer) expireLocked(now time.Time) {
	l := p.mu.lingering
	for len(l) > 0 {
		b := l[0]
		if !b.shipped && now.Before(b.opened.Add(p.opts.Linger)) {
			break
		}
		if !b.shipped {
			p.shipLocked(b)
		}
		l[0] = nil
		l = l[1:]
	}
	p.mu.lingering = l
}

func (p *Producer) wakeSender() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// closed reports whether Close has been called.
func (p *Producer) closed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.closed
}

// Flush appends every batch open now, and returns when every record
// produced before it has been appended and its callback has run, or when
// ctx ends (with ctx.Err()). It returns the first append error of a record
// produced without a callback since the last Flush, so that no error goes
// unseen. After Close it returns nil: Close flushed. A Flush with
// nothing to report after the Store closed returns ErrClosed.
func (p *Producer) Flush(ctx context.Context) (err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		select {
		case <-p.exited:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if p.mu.records == 0 && p.mu.err == nil && p.s.closed.Load() {
		// Nothing buffered or unreported to fail with it: say so all the same.
		p.mu.Unlock()
		return ErrClosed
	}
	p.shipAllLocked()
	m := &batch{done: make(chan struct{})}
	p.mu.ready = append(p.mu.ready, m)
	p.wakeSender()
	p.mu.Unlock()
	select {
	case <-m.done:
		return m.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close flushes (see Flush, without a deadline), stops the producer's
// goroutine and returns the first append error of a record produced
// without a callback. A batch an idempotent producer is retrying is tried
// no more: it fails with its last error. Produce after Close fails with ErrClosed, and a
// Produce waiting for room returns ErrClosed. Closing twice returns nil.
func (p *Producer) Close() (err error) {
	defer wrapErr(&err)
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		<-p.exited
		return nil
	}
	p.mu.closed = true
	close(p.closing)
	p.shipAllLocked()
	m := &batch{done: make(chan struct{}), stop: true}
	p.mu.ready = append(p.mu.ready, m)
	p.wakeSender()
	p.mu.Unlock()
	<-p.exited
	return m.err
}

var arenas sync.Pool

// maxPooledArena bounds the bytes of an arena kept for reuse, so that one
// large record does not pin its buffer.
const maxPooledArena = 1 << 20
