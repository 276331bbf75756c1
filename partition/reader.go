package partition

import (
	"context"
	"fmt"
	"iter"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// Reader reads a partition's records in offset order, or the record at any
// offset (SetOffset, then Next). It iterates batches straight from the
// segment's memory mapping, without copying them and without allocating per
// record, checking each batch when it reaches it (header rules, offsets
// that rise, the CRC the first time the process reads the batch). A
// compressed batch is decompressed once, into a buffer the Reader reuses.
// Control batches (a transaction's commit or abort markers) are stepped
// over: they take offsets, but no record of theirs is returned. A reader of
// NewReader reads uncommitted (Kafka's read_uncommitted): it returns the
// records of open and aborted transactions too. One of NewReaderIsolation
// with ReadCommitted stops at the last stable offset and steps over the
// batches of aborted transactions, which the segments' .txnindex files
// name. To keep the mapping valid it holds a reference on the segment it
// is in, which Close releases (so does reaching the end of the partition).
//
// A Reader is the fast way to look records up by offset: SetOffset keeps
// the segment it holds when the new offset is in it, finds the batch
// through the segment's index and a scan of batch headers, and steps over
// the earlier records of that batch by their length prefixes without
// decoding them — in a large batch, from a record shortly before, as the
// segment remembers where every 8th record starts in the batches lookups
// landed in (within a budget of 1/64 of the segment's size). A lookup
// allocates nothing but that, once per batch.
//
// A Reader is not safe for concurrent use; any number of Readers may read
// one partition.
type Reader struct {
	p    *Partition
	next int64 // offset of the next record to return

	st   *state  // the snapshot ref was found in
	ref  *segRef // the segment cur reads, held; nil when none is
	cur  segment.Cursor
	seek bool // next moved: cur must be positioned again

	it      log.RecordIter // the batch being read
	inBatch bool
	dec     log.Decoder // decompresses the compressed batches it reads

	iso   Isolation
	limit int64     // the end the reader saw when it took its last batch
	txn   txnFilter // ReadCommitted: the aborted transactions around next
}

// NewReader returns a Reader positioned at offset. An offset outside
// [StartOffset, EndOffset] fails at the first read.
func (p *Partition) NewReader(offset int64) *Reader {
	return p.NewReaderIsolation(offset, ReadUncommitted)
}

// NewReaderIsolation returns a Reader positioned at offset that reads at
// isolation level iso. Under ReadCommitted, Next stops at the last stable
// offset (NextWait waits for it to move) and steps over the batches of
// aborted transactions; its cost over ReadUncommitted is a lookup of the
// aborted transactions when a transactional batch reaches past what it
// looked up last, nothing for other batches. A level that is not one of
// the two reads as ReadCommitted.
func (p *Partition) NewReaderIsolation(offset int64, iso Isolation) *Reader {
	if !iso.Valid() {
		iso = ReadCommitted
	}
	r := &Reader{p: p, next: offset, iso: iso}
	r.dec.Limit = p.cfg.maxDecompress()
	r.txn.reset()
	return r
}

// Isolation returns the reader's isolation level.
func (r *Reader) Isolation() Isolation { return r.iso }

// Offset returns the offset of the next record Next will return (or wait
// for).
func (r *Reader) Offset() int64 { return r.next }

// SetOffset repositions the reader at offset: the next call to Next returns
// the record at offset (or, where compaction removed it, the first one
// after it). The reader keeps the segment it holds if offset is in it.
func (r *Reader) SetOffset(offset int64) {
	r.next = offset
	r.inBatch = false
	r.seek = true
	r.txn.reset()
}

// Close releases the segment the reader holds. The reader can be used again
// (it takes a new reference when it reads).
func (r *Reader) Close() { r.drop() }

// drop forgets the batch in hand and releases its segment.
func (r *Reader) drop() {
	r.inBatch = false
	if r.ref != nil {
		_ = r.ref.release()
		r.ref, r.st, r.cur = nil, nil, segment.Cursor{}
	}
}

// Next reads the next record into rec and reports whether there was one;
// false with a nil error means the reader is at the end of what the
// partition lets readers see, its high watermark (see NextWait). The record's Key, Value and header values alias the segment's
// mapping, which the reader holds: they are valid until the next call to
// Next, SetOffset or Close. Records before the reader's offset in the first
// batch are skipped. Errors: ErrOutOfRange when the offset is past the end
// or fell below the start offset (retention or DeleteRecords moved it; a
// reader notices at its next batch), ErrClosed (at the next batch), and
// corruption from the segment layer (matching segment.ErrCorrupt or
// log.ErrCorrupt).
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
				return false, r.corrupt(err)
			}
			// Advance past the whole batch: its last records may be gone
			// (compaction keeps a batch's last offset).
			r.next = max(r.next, r.it.Header().NextOffset())
			r.inBatch = false
		}
		h, batch, err := r.nextBatch()
		if err != nil || batch == nil {
			return false, err
		}
		if r.iso == ReadCommitted && (h.IsTransactional() || h.IsControl()) && r.txn.aborted(r.p, h, r.limit, r.ref.seg.NextOffset()) {
			r.next = max(r.next, h.NextOffset())
			continue
		}
		if h.IsControl() {
			// A transaction's marker: it takes its offsets, and no reader
			// sees it as a record.
			r.next = max(r.next, h.NextOffset())
			continue
		}
		if h.BaseOffset >= r.next {
			r.it, err = r.dec.Iter(batch, h)
		} else {
			// The batch begins before the offset wanted (a lookup, or the
			// first batch read): step over the earlier records without
			// decoding them.
			r.it, err = skipTo(h, batch, r.next, &r.cur, &r.dec)
		}
		if err != nil {
			return false, r.corrupt(err)
		}
		r.inBatch = true
	}
}

func (r *Reader) corrupt(err error) error {
	return fmt.Errorf("partition: reading %s at %d: %w", r.p.name, r.next, err)
}

// nextBatch returns the next batch to read from, checked, or nil at the end
// of the partition. It moves to the segment that holds r.next when the
// reader holds none, when the segment list changed (a roll, retention,
// compaction or truncation) or when SetOffset moved it out of the segment it
// holds.
func (r *Reader) nextBatch() (log.BatchHeader, []byte, error) {
	p := r.p
	for {
		if err := p.checkOpen(); err != nil {
			r.drop()
			return log.BatchHeader{}, nil, err
		}
		// The high watermark before the state: every batch below it is in
		// the segments of a state loaded after it.
		hw := p.HighWatermark()
		if r.ref != nil && (p.state.Load() != r.st ||
			(r.seek && (r.next < r.ref.seg.Base() || r.next >= r.ref.seg.NextOffset()))) {
			r.drop()
		}
		if r.ref == nil {
			ok, err := r.position()
			if err != nil || !ok {
				return log.BatchHeader{}, nil, err
			}
		} else if r.seek {
			cur, err := r.ref.seg.CursorAt(r.next)
			if err != nil {
				r.drop()
				return log.BatchHeader{}, nil, r.corrupt(err)
			}
			r.cur = cur
		}
		r.seek = false
		if start := p.start.Load(); r.next < start {
			r.drop()
			return log.BatchHeader{}, nil, fmt.Errorf("partition: offset %d of %s out of range [%d, %d]: %w", r.next, p.name, start, hw, ErrOutOfRange)
		}
		r.limit = p.visibleEnd(r.iso, hw)
		r.cur.SetLimit(r.limit)
		h, batch, err := r.cur.Next()
		if err != nil {
			r.drop()
			return h, nil, r.corrupt(err)
		}
		if batch != nil {
			return h, batch, nil
		}
		// The end of what this segment has published, or of what the
		// partition lets readers see.
		segs := r.st.segs
		if r.cur.AtLimit() || segs[len(segs)-1] == r.ref {
			r.drop() // the end of the partition
			return log.BatchHeader{}, nil, nil
		}
		// A later segment exists, so this one was sealed before it was
		// published: every batch of it has been read.
		r.next = max(r.next, r.ref.seg.NextOffset())
		r.drop()
	}
}

// position finds the segment holding r.next, takes a reference on it and
// positions the cursor there; false means r.next is the end offset.
func (r *Reader) position() (bool, error) {
	offset := r.next
	return r.p.fromSegment(offset, func(st *state, i int, ref *segRef, _ int64) (bool, error) {
		var cur segment.Cursor
		ok, err := cursorAt(st, i, ref, offset, &cur)
		if ok {
			r.st, r.ref, r.cur = st, ref, cur
		}
		return ok, err
	})
}

// cursorAt positions cur at offset in ref, the i-th segment of st, as
// fromSegment offers it; false means that ref is sealed and nothing in it
// reaches offset (a gap), and the next segment is to be tried.
func cursorAt(st *state, i int, ref *segRef, offset int64, cur *segment.Cursor) (bool, error) {
	if i < len(st.segs)-1 && ref.seg.NextOffset() <= offset {
		return false, nil
	}
	err := ref.seg.CursorInto(cur, offset)
	return err == nil, err
}

// NextWait is Next that waits for a record when the reader is at the end of
// the partition (under ReadCommitted, at the last stable offset), until one
// is appended (a transaction completes), ctx ends (ctx.Err()) or the
// partition is closed (ErrClosed).
func (r *Reader) NextWait(ctx context.Context, rec *log.Record) error {
	for {
		ok, err := r.Next(rec)
		if ok || err != nil {
			return err
		}
		if err := r.p.WaitIsolation(ctx, r.next, r.iso); err != nil {
			return err
		}
	}
}

// Records returns an iterator over the partition's records from offset on that
// tails the log: at the end it waits for new records until ctx ends or the
// partition closes. It yields a final non-nil error (ctx.Err(),
// ErrClosed, ErrOutOfRange, corruption) and stops. A yielded record aliases
// the iterator's buffer: it is valid only until the loop body returns.
func (p *Partition) Records(ctx context.Context, offset int64) iter.Seq2[log.Record, error] {
	return p.RecordsIsolation(ctx, offset, ReadUncommitted)
}

// RecordsIsolation is Records for a reader of level iso (see
// NewReaderIsolation): under ReadCommitted it waits at the last stable
// offset and yields no record of an aborted transaction.
func (p *Partition) RecordsIsolation(ctx context.Context, offset int64, iso Isolation) iter.Seq2[log.Record, error] {
	return func(yield func(log.Record, error) bool) {
		r := p.NewReaderIsolation(offset, iso)
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
