package strata

import (
	"errors"
	"io/fs"
	"math"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stratalog/strata/log"
)

// producerIdentity is the allocation of an idempotent Producer's id, at
// its first Produce.
type producerIdentity struct {
	mu   sync.Mutex // serialises the allocation
	have atomic.Bool
}

// stamp is what an idempotent Producer stamps a batch with: its producer
// id, epoch and the base sequence of the batch in its partition. An id of
// -1 (noStamp) stamps nothing.
type stamp struct {
	id    int64
	epoch int16
	seq   int32
}

// noStamp is the stamp of a batch without a producer id.
var noStamp = stamp{id: -1}

// ensureID gives an idempotent producer its producer id, at its first
// Produce, and returns the error that kept it from having one (the next
// Produce tries again).
func (p *Producer) ensureID() error {
	ids := p.ids
	if ids == nil || ids.have.Load() {
		return nil
	}
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if ids.have.Load() {
		return nil
	}
	id, err := p.s.newProducerID()
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.mu.id = id
	p.mu.Unlock()
	ids.have.Store(true)
	return nil
}

// stampLocked stamps batch b, being shipped, with the producer's id and
// epoch and the next sequence of its partition, which moves past it.
func (p *Producer) stampLocked(b *batch) {
	seq := &b.tb.seq[b.part]
	b.stamp = stamp{id: p.mu.id, epoch: p.mu.epoch, seq: *seq}
	*seq = log.IncrementSequence(*seq, int32(len(b.a.recs)))
}

// appendRetrying appends the encoded batch b. An idempotent producer
// appends it again, with the same stamp, after an I/O error
// (retriable), every RetryBackoff until DeliveryTimeout has passed since
// the batch was opened (its first record produced), or until Close.
func (p *Producer) appendRetrying(b *batch, e encoded) (int64, error) {
	off, err := p.attempt(e)
	if p.ids == nil || p.opts.DeliveryTimeout == 0 {
		return off, err
	}
	deadline := b.opened.Add(p.opts.DeliveryTimeout)
	var timer *time.Timer
	for err != nil && retriable(err) {
		wait := min(p.opts.RetryBackoff, time.Until(deadline))
		if wait <= 0 {
			break
		}
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
		case <-p.closing:
			return off, err
		}
		if e.err = p.checkTopic(b.tb); e.err != nil {
			return 0, e.err
		}
		off, err = p.attempt(e)
	}
	return off, err
}

// attempt appends the encoded batch once. A test's afterAppend may then
// replace the answer: an error after a batch was written is what a lost
// answer looks like to the producer.
func (p *Producer) attempt(e encoded) (int64, error) {
	off, err := e.append()
	if p.afterAppend != nil {
		err = p.afterAppend(err)
	}
	return off, err
}

// retriable reports whether an append that failed with err may succeed if
// tried again: an I/O error (of the file system, or a system call's) that
// left the partition open.
func retriable(err error) bool {
	if errors.Is(err, ErrClosed) {
		return false
	}
	var pe *fs.PathError
	var errno syscall.Errno
	return errors.As(err, &pe) || errors.As(err, &errno)
}

// newEpoch moves an idempotent producer to its next epoch after a batch
// failed for good, since the partition may or may not hold it: every
// sequence starts again at 0, and the batches shipped but not yet sent
// (rest, which the sender took, and those queued since) are stamped again
// in the order they will be sent. At the last epoch the producer takes a
// new producer id instead; if it cannot have one, every later batch fails
// with that error.
func (p *Producer) newEpoch(rest []*batch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.epoch == math.MaxInt16 {
		id, err := p.s.newProducerID()
		if err != nil {
			p.mu.broken = err
			return
		}
		p.mu.id, p.mu.epoch = id, 0
	} else {
		p.mu.epoch++
	}
	reset := map[*topicBatches]bool{}
	restamp := func(bs []*batch) {
		for _, b := range bs {
			if b == nil || b.done != nil {
				continue
			}
			if !reset[b.tb] {
				clear(b.tb.seq)
				reset[b.tb] = true
			}
			p.stampLocked(b)
		}
	}
	for _, tb := range p.mu.topics {
		clear(tb.seq)
		reset[tb] = true
	}
	restamp(rest)
	restamp(p.mu.ready)
}
