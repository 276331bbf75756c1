package strata

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
)

// ProducerOptions configure a Producer. Every zero (or negative, for the
// sizes) field means the default written on it.
type ProducerOptions struct {
	// Linger is how long a partition's batch waits for more records after
	// its first one before it is appended (Kafka's linger.ms). Default 5 ms
	// (Kafka 4.0's); negative means no wait: a batch is appended as soon as
	// the producer's goroutine is free, with whatever gathered meanwhile.
	Linger time.Duration
	// BatchBytes is the encoded size at which a partition's batch is
	// appended without waiting for Linger (Kafka's batch.size): a record
	// that would take the batch past it starts the next one. Default 16384.
	// A topic's MaxBatchBytes caps it; a record larger than BatchBytes gets
	// a batch of its own.
	BatchBytes int
	// MaxBufferedRecords bounds the records produced but not yet appended;
	// at the bound Produce waits for room (back-pressure). Default 100000.
	MaxBufferedRecords int
	// MaxBufferedBytes bounds their encoded size in the same way (Kafka's
	// buffer.memory). Default 32 MiB. A record larger than the bound is
	// taken when nothing else is buffered.
	MaxBufferedBytes int
	// Compression is the codec the producer compresses its batches with
	// (Kafka's compression.type for producers), on topics whose own
	// Compression is producer (the default); a topic that names a codec
	// uses its own. A batch that would not get smaller is appended
	// uncompressed. Default CompressionNone. BatchBytes counts the records
	// before compression.
	Compression CompressionType
	// CompressionLevel is the codec's level (gzip 1–9, lz4 1–17, zstd
	// -131072–22); 0, the default, is the codec's own.
	CompressionLevel int
	// DisableIdempotence turns the producer's idempotence off (Kafka's
	// enable.idempotence=false): its batches carry no producer id, and a
	// batch whose append fails is not tried again. By default a Producer
	// is idempotent, as Kafka's is since 3.0; see Producer.
	DisableIdempotence bool
	// RetryBackoff is how long an idempotent producer waits before it
	// appends again a batch whose append failed with an I/O error (Kafka's
	// retry.backoff.ms). Default 100 ms.
	RetryBackoff time.Duration
	// DeliveryTimeout bounds the time from the Produce of a batch's first
	// record (the batch's opening, Linger included) to the end of its last
	// retry, as Kafka's delivery.timeout.ms counts from a batch's creation
	// (ProducerBatch.createdMs): a batch still failing then fails its
	// records. Default 2 minutes; negative means no retries.
	DeliveryTimeout time.Duration
}

// Defaults of ProducerOptions.
const (
	defaultLinger             = 5 * time.Millisecond
	defaultBatchBytes         = 16384
	defaultMaxBufferedRecords = 100000
	defaultMaxBufferedBytes   = 32 << 20
	defaultRetryBackoff       = 100 * time.Millisecond
	defaultDeliveryTimeout    = 2 * time.Minute
)

func (o ProducerOptions) withDefaults() ProducerOptions {
	switch {
	case o.Linger == 0:
		o.Linger = defaultLinger
	case o.Linger < 0:
		o.Linger = 0
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = defaultBatchBytes
	}
	if o.MaxBufferedRecords <= 0 {
		o.MaxBufferedRecords = defaultMaxBufferedRecords
	}
	if o.MaxBufferedBytes <= 0 {
		o.MaxBufferedBytes = defaultMaxBufferedBytes
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = defaultRetryBackoff
	}
	switch {
	case o.DeliveryTimeout == 0:
		o.DeliveryTimeout = defaultDeliveryTimeout
	case o.DeliveryTimeout < 0:
		o.DeliveryTimeout = 0
	}
	return o
}

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

// codec returns the codec of o.Compression, or an error wrapping
// ErrInvalidConfig if it or the level is not one.
func (o ProducerOptions) codec() (log.Compression, error) {
	if o.Compression == "" {
		o.Compression = CompressionNone
	}
	c, ok := o.Compression.Codec()
	if !ok {
		return log.None, fmt.Errorf("strata: producer compression %q is not none, gzip, snappy, lz4 or zstd: %w", o.Compression, ErrInvalidConfig)
	}
	if err := log.CheckConfigLevel(c, o.CompressionLevel, ErrInvalidConfig); err != nil {
		return log.None, fmt.Errorf("strata: producer: %w", err)
	}
	return c, nil
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
// the topic is new to it or was deleted and created again.
func (p *Producer) topicLocked(name string, t *topic.Topic) *topicBatches {
	tb := p.mu.topics[name]
	if tb != nil && tb.t == t {
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

// run is the producer's goroutine: it ships batches whose linger is over,
// appends the shipped ones in order, runs their callbacks and answers flush
// marks, until Close's mark.
func (p *Producer) run() {
	defer close(p.exited)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var work []*batch
	for {
		p.mu.Lock()
		p.expireLocked(time.Now())
		work, p.mu.ready = p.mu.ready, work[:0]
		lingering, wait := len(p.mu.lingering) > 0, time.Duration(0)
		if lingering {
			// The deadline may have passed since expireLocked looked: then
			// wait 0 and look again, rather than not at all.
			wait = max(0, time.Until(p.mu.lingering[0].opened.Add(p.opts.Linger)))
		}
		p.mu.Unlock()

		for i, b := range work {
			work[i] = nil
			if b.done == nil {
				if !p.send(b) && p.ids != nil {
					p.newEpoch(work[i+1:])
				}
				continue
			}
			p.mu.Lock()
			b.err, p.mu.err = p.mu.err, nil
			p.mu.Unlock()
			close(b.done)
			if b.stop {
				return
			}
		}
		if len(work) > 0 {
			continue
		}
		if lingering {
			timer.Reset(wait)
		} else {
			timer.Stop()
		}
		select {
		case <-p.wake:
		case <-timer.C:
		}
	}
}

// send appends batch b, encoding it first unless a Produce did (or did
// with another stamp than the batch's now), and runs its callbacks. It
// reports whether the batch was appended.
func (p *Producer) send(b *batch) bool {
	p.mu.Lock()
	if !b.ahead {
		// Batches are shipped, and sent, in one order: one no Produce
		// took is at the front.
		p.mu.unencoded[0] = nil
		p.mu.unencoded = p.mu.unencoded[1:]
	}
	for b.ahead && b.encBuf == nil {
		p.mu.encoded.Wait()
	}
	e, buf := b.enc, b.encBuf
	b.enc, b.encBuf = encoded{}, nil
	st, broken := b.stamp, p.mu.broken
	p.mu.Unlock()
	switch {
	case buf == nil:
		buf = encodeBuffers.Get().(*[]byte)
		e = p.encode(b, st, (*buf)[:0])
	case e.err == nil && e.stamp != st:
		// Encoded ahead before a new epoch restamped it.
		e = p.encode(b, st, e.b.Bytes()[:0])
	case e.err == nil:
		// Encoded ahead: the topic may have been deleted since.
		e.err = p.checkTopic(b.tb)
	}
	if broken != nil && e.err == nil {
		e.err = broken
	}
	off, err := p.appendRetrying(b, e)
	err = storeErr(err)
	if bs := e.b.Bytes(); bs != nil {
		*buf = bs[:0] // grown, perhaps: keep the larger one
	}
	encodeBuffers.Put(buf)

	a := b.a
	b.a = nil

	p.mu.Lock()
	p.mu.records -= len(a.recs)
	p.mu.bytes -= b.size - log.BatchHeaderSize
	if p.mu.room != nil {
		close(p.mu.room)
		p.mu.room = nil
	}
	p.mu.Unlock()

	unseen := false
	for i, cb := range a.cbs {
		if cb == nil {
			unseen = unseen || err != nil
			continue
		}
		pos := Position{Partition: b.part, Offset: -1}
		if err == nil {
			pos.Offset = off + int64(i)
		}
		cb(pos, err)
	}
	if unseen {
		p.mu.Lock()
		if p.mu.err == nil {
			p.mu.err = err
		}
		p.mu.Unlock()
	}
	a.free()
	return err == nil
}

// encoded is a batch encoded for its partition, with the stamp it was
// encoded with, or the error that kept it from being encoded.
type encoded struct {
	pt    *partition.Partition
	b     partition.EncodedBatch
	stamp stamp
	err   error
}

// checkTopic returns ErrUnknownTopic unless the topic tb was made for is
// still the store's topic of its name.
func (p *Producer) checkTopic(tb *topicBatches) error {
	t, err := p.s.topic(tb.name)
	switch {
	case err != nil:
		return err
	case t != tb.t:
		return fmt.Errorf("strata: topic %q was deleted after the batch was started: %w", tb.name, ErrUnknownTopic)
	}
	return nil
}

// append appends the encoded batch, or returns the error. A batch with a
// producer id that the partition already holds is answered with the
// offset it was written at.
func (e encoded) append() (int64, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.stamp.id >= 0 {
		base, _, err := e.pt.AppendEncodedProduced(e.b)
		return base, err
	}
	return e.pt.AppendEncoded(e.b)
}

// encode encodes batch b for its partition of the topic it was made for,
// into buf, stamped with st if st has a producer id. A batch queued before
// its topic was deleted fails with ErrUnknownTopic, even if a topic of that
// name was created since: it never lands in the new one.
func (p *Producer) encode(b *batch, st stamp, buf []byte) encoded {
	if err := p.checkTopic(b.tb); err != nil {
		return encoded{err: err}
	}
	pt, err := b.tb.t.Partition(b.part)
	if err != nil {
		return encoded{err: err}
	}
	if st.id < 0 {
		eb, err := pt.EncodeWith(buf, b.a.recs, p.codec, p.opts.CompressionLevel)
		return encoded{pt: pt, b: eb, stamp: st, err: err}
	}
	pb := partition.ProducerBatch{ID: st.id, Epoch: st.epoch, Seq: st.seq}
	eb, err := pt.EncodeProduced(buf, b.a.recs, pb, p.codec, p.opts.CompressionLevel)
	return encoded{pt: pt, b: eb, stamp: st, err: err}
}

// arena holds a batch's records with copies of their bytes. Arenas are
// recycled, so that a steady stream of records allocates nothing.
type arena struct {
	recs []Record
	cbs  []func(Position, error)
	hdrs []Header
	buf  []byte // never nil, so that a copied empty slice stays non-nil
}

var arenas sync.Pool

func newArena(batchBytes int) *arena {
	if a, ok := arenas.Get().(*arena); ok {
		return a
	}
	return &arena{buf: make([]byte, 0, batchBytes)}
}

// add appends a copy of r to the arena.
func (a *arena) add(r *Record, cb func(Position, error)) {
	rec := Record{Timestamp: r.Timestamp, Key: a.copy(r.Key), Value: a.copy(r.Value)}
	if len(r.Headers) > 0 {
		start := len(a.hdrs)
		for _, h := range r.Headers {
			a.hdrs = append(a.hdrs, Header{Key: h.Key, Value: a.copy(h.Value)})
		}
		// Earlier records keep their headers if hdrs grows: the old array
		// stays as it is.
		rec.Headers = a.hdrs[start:len(a.hdrs):len(a.hdrs)]
	}
	a.recs = append(a.recs, rec)
	a.cbs = append(a.cbs, cb)
}

// copy returns a copy of b in the arena: nil for nil, non-nil otherwise.
func (a *arena) copy(b []byte) []byte {
	if b == nil {
		return nil
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// maxPooledArena bounds the bytes of an arena kept for reuse, so that one
// large record does not pin its buffer.
const maxPooledArena = 1 << 20

// free drops the arena's references and recycles it.
func (a *arena) free() {
	clear(a.recs)
	clear(a.cbs)
	clear(a.hdrs)
	if cap(a.buf) > maxPooledArena {
		return
	}
	a.recs, a.cbs, a.hdrs, a.buf = a.recs[:0], a.cbs[:0], a.hdrs[:0], a.buf[:0]
	arenas.Put(a)
}
