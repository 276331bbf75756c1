package strata

import (
	"fmt"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
)

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
