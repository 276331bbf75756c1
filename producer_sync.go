package strata

import (
	"context"
	"fmt"
	"sync/atomic"
)

// ProduceSync produces records to topicName, as Produce does each, appends
// their batches without waiting for Linger, and returns once every record
// is appended, with their Positions in the order given, or with the first
// error (the Positions of the records that failed have Offset -1). It is
// the synchronous, idempotent append: an idempotent Producer's retries
// (see Producer) apply, so that a record is appended once however many
// times its batch had to be tried, and a retried batch that was written
// answers with the Positions it was written at. Concurrent ProduceSync and
// Produce calls share the producer's batches.
//
// No records is ErrNoRecords. A record that Produce refuses at once (see
// Produce) stops the call there: the records before it are still appended,
// and ProduceSync waits for them and returns their Positions with that
// error. If ctx ends first, ProduceSync returns ctx.Err() at once, but the
// records it produced are appended all the same, as Kafka's producer does
// when a caller stops waiting for a send. It must not be called from a
// callback.
func (p *Producer) ProduceSync(ctx context.Context, topicName string, records ...Record) (_ []Position, err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	if p.closed() || p.s.closed.Load() {
		return nil, ErrClosed
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("strata: produce to %q: %w", topicName, ErrNoRecords)
	}
	w := &syncWait{pos: make([]Position, len(records)), errs: make([]error, len(records)), done: make(chan struct{})}
	// One count per record, and one for this loop, so that done closes
	// only once every record produced has its answer.
	w.left.Store(int64(len(records)) + 1)
	var refused error
	produced := 0
	for i := range records {
		if refused = p.Produce(ctx, topicName, records[i], w.callback(i)); refused != nil {
			break
		}
		produced++
	}
	for i := produced; i < len(records); i++ {
		w.pos[i] = Position{Offset: -1}
	}
	if produced > 0 {
		p.mu.Lock()
		p.shipAllLocked()
		p.mu.Unlock()
	}
	w.answer(int64(len(records)-produced) + 1)
	select {
	case <-w.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for _, err := range w.errs[:produced] {
		if err != nil {
			return w.pos, err
		}
	}
	return w.pos, refused
}

// syncWait gathers the answers of ProduceSync's records: the callbacks
// (each of another record) set them, and the call reads them once done is
// closed.
type syncWait struct {
	pos  []Position
	errs []error
	left atomic.Int64  // answers still to come
	done chan struct{} // closed when left reaches 0
}

// callback returns the callback of record i.
func (w *syncWait) callback(i int) func(Position, error) {
	return func(pos Position, err error) {
		w.pos[i], w.errs[i] = pos, err
		w.answer(1)
	}
}

// answer counts n answers.
func (w *syncWait) answer(n int64) {
	if w.left.Add(-n) == 0 {
		close(w.done)
	}
}
