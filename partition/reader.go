package partition

import (
	"context"
	"fmt"
	"iter"

	"github.com/stratalog/strata/log"
)

// DefaultReadBytes is how much a Reader asks of the partition at a time.
const DefaultReadBytes = 1 << 20

// Reader reads a partition's records in offset order. It iterates whole
// batches straight from the segment's memory mapping, about 1 MiB at a time,
// without copying them and without allocating per record; to keep that
// memory valid it holds a reference on the segment it is in, which Close
// releases (so does reaching the end of the partition). A Reader is not safe
// for concurrent use; any number of Readers may read one partition.
type Reader struct {
	p        *Partition
	next     int64   // offset of the next record to return
	ref      *segRef // the segment rest comes from, held
	rest     []byte  // batches not yet iterated, in ref's mapping
	it       log.RecordIter
	inBatch  bool
	maxBytes int
}

// NewReader returns a Reader positioned at offset. An offset outside
// [StartOffset, EndOffset] fails at the first read.
func (p *Partition) NewReader(offset int64) *Reader {
	return &Reader{p: p, next: offset, maxBytes: DefaultReadBytes}
}

// Offset returns the offset of the next record Next will return (or wait
// for).
func (r *Reader) Offset() int64 { return r.next }

// SetOffset repositions the reader at offset.
func (r *Reader) SetOffset(offset int64) {
	r.drop()
	r.next = offset
}

// Close releases the segment the reader holds. The reader can be used again
// (it takes a new reference when it reads).
func (r *Reader) Close() { r.drop() }

// drop forgets the batches in hand and releases their segment.
func (r *Reader) drop() {
	r.rest, r.inBatch = nil, false
	if r.ref != nil {
		_ = r.ref.release()
		r.ref = nil
	}
}

// Next reads the next record into rec and reports whether there was one;
// false with a nil error means the reader is at the end of the partition (see
// NextWait). The record's Key, Value and header values alias the segment's
// memory: they are valid until the next call to Next or Close. Records before the
// reader's offset in the first batch are skipped. Errors: ErrOutOfRange when
// the offset fell below the start offset (retention moved it) or is past the
// end, ErrClosed, and corruption from the segment layer.
func (r *Reader) Next(rec *log.Record) (bool, error) {
	for {
		if r.inBatch {
			if r.it.Next(rec) {
				if rec.Offset < r.next {
					continue
				}
				r.next = rec.Offset + 1
				return true, nil
			}
			if err := r.it.Err(); err != nil {
				return false, fmt.Errorf("partition: reading %s at %d: %w", r.p.name, r.next, err)
			}
			// Advance past the whole batch: its last records may be gone
			// (compaction keeps a batch's last offset).
			r.next = max(r.next, r.it.Header().NextOffset())
			r.inBatch = false
		}
		if len(r.rest) > 0 {
			it, err := log.NewRecordIter(r.rest)
			if err != nil {
				return false, fmt.Errorf("partition: reading %s at %d: %w", r.p.name, r.next, err)
			}
			r.rest = r.rest[it.Header().Size():]
			r.it, r.inBatch = it, true
			continue
		}
		r.drop()
		out, ref, err := r.p.viewBatches(r.next, r.maxBytes)
		if err != nil || len(out) == 0 {
			return false, err
		}
		r.rest, r.ref = out, ref
	}
}

// NextWait is Next that waits for a record when the reader is at the end of
// the partition, until one is appended, ctx ends (ctx.Err()) or the partition
// is closed (ErrClosed).
func (r *Reader) NextWait(ctx context.Context, rec *log.Record) error {
	for {
		ok, err := r.Next(rec)
		if ok || err != nil {
			return err
		}
		if err := r.p.Wait(ctx, r.next); err != nil {
			return err
		}
	}
}

// Records returns an iterator over the partition's records from offset on
// that tails the log: at the end it waits for new records until ctx ends or
// the partition closes. It yields a final non-nil error (ctx.Err(),
// ErrClosed, ErrOutOfRange, corruption) and stops. A yielded record aliases
// the iterator's buffer: it is valid only until the loop body returns.
func (p *Partition) Records(ctx context.Context, offset int64) iter.Seq2[log.Record, error] {
	return func(yield func(log.Record, error) bool) {
		r := p.NewReader(offset)
		defer r.Close()
		var rec log.Record
		for {
			if err := r.NextWait(ctx, &rec); err != nil {
				yield(log.Record{}, err)
				return
			}
			if !yield(rec, nil) {
				return
			}
		}
	}
}
