package partition

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// DeleteRecords advances the start offset to offset, as Kafka's
// DeleteRecords does: reads below it fail with ErrOutOfRange from then on,
// and the whole segments below it are removed later by retention. The new
// start offset is checkpointed (written atomically and fsynced) before it
// takes effect. Moving it backwards is a no-op; past EndOffset is
// ErrOutOfRange.
func (p *Partition) DeleteRecords(offset int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return fmt.Errorf("partition: %s: %w", p.name, ErrClosed)
	}
	start, end := p.start.Load(), p.end.Load()
	if offset > end {
		return fmt.Errorf("partition: start offset %d for %s out of range [%d, %d]: %w", offset, p.name, start, end, ErrOutOfRange)
	}
	if offset <= start {
		return nil
	}
	if err := writeCheckpoint(p.fsys, p.dir, startOffsetFile, offset); err != nil {
		return err
	}
	p.start.Store(offset)
	return nil
}

// Truncate removes every record at or after offset, so that EndOffset
// becomes offset: later segments are deleted and the one holding offset is
// rewritten without them (a batch that straddles offset is rewritten with
// its records below offset, keeping their timestamps and headers). The
// result is fsynced. Truncating below StartOffset or past EndOffset is
// ErrOutOfRange.
//
// Readers are never disturbed: the rewritten segment goes to new files that
// are renamed over the old names, and a reader holding the old segment keeps
// reading its (unlinked) files until it lets go. Truncate copies the kept
// part of one segment, so it is meant for recovery, tests and tools, not for
// the hot path.
func (p *Partition) Truncate(offset int64) error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if err := p.flushSealedLocked(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.closed:
		return fmt.Errorf("partition: %s: %w", p.name, ErrClosed)
	case p.mu.failed != nil:
		return fmt.Errorf("partition: %s: %w: %w", p.name, ErrClosed, p.mu.failed)
	}
	start, end := p.start.Load(), p.end.Load()
	if offset < start || offset > end {
		return fmt.Errorf("partition: truncation offset %d for %s out of range [%d, %d]: %w", offset, p.name, start, end, ErrOutOfRange)
	}
	if offset == end {
		return nil
	}
	segs := p.state.Load().segs
	i := max(0, sort.Search(len(segs), func(i int) bool { return segs[i].seg.Base() > offset })-1)
	old := segs[i]

	// The records of the straddling batch that stay, re-encoded.
	keep, opts, err := p.straddling(old.seg, offset)
	if err != nil {
		return err
	}
	var extra []byte
	if len(keep) > 0 {
		if extra, err = log.AppendBatch(nil, keep, opts); err != nil {
			return fmt.Errorf("partition: truncating %s: %w", p.name, err)
		}
		log.SetBaseOffset(extra, keep[0].Offset)
	}

	// A crash from here on must recover the rewritten segment.
	if err := writeCheckpoint(p.fsys, p.dir, recoveryPointFile, old.seg.Base()); err != nil {
		return p.failLocked(fmt.Errorf("truncating: %w", err))
	}
	next, err := old.seg.Rewrite(offset, extra)
	if err != nil {
		return p.failLocked(fmt.Errorf("truncating: %w", err))
	}
	ref := newRef(next)
	p.state.Store(&state{segs: append(segs[:i:i], ref)})
	p.mu.active = ref
	p.end.Store(next.NextOffset())
	p.synced.Store(next.NextOffset())
	// The old segment's names now belong to the new one: close it when its
	// readers let go, without deleting anything. Later segments go.
	_ = old.release()
	for _, r := range segs[i+1:] {
		if err := r.seg.MarkDeleted(); err != nil {
			return p.failLocked(fmt.Errorf("truncating: %w", err))
		}
		r.remove.Store(true)
		_ = r.release()
	}
	if err := p.fsys.SyncDir(p.dir); err != nil {
		return p.failLocked(fmt.Errorf("truncating: %w", err))
	}
	return nil
}

// straddling returns copies of the records below offset of the batch of s
// that holds offset, and the options that re-encode them with the same
// timestamps; none when offset starts a batch.
func (p *Partition) straddling(s *segment.Segment, offset int64) ([]log.Record, log.BatchOptions, error) {
	batches, err := s.Read(nil, offset, 1)
	if err != nil || len(batches) == 0 {
		return nil, log.BatchOptions{}, err
	}
	it, err := log.NewRecordIter(batches)
	if err != nil {
		return nil, log.BatchOptions{}, err
	}
	h := it.Header()
	opts := log.BatchOptions{TimestampType: h.TimestampType(), Now: h.MaxTimestamp}
	var keep []log.Record
	var r log.Record
	for it.Next(&r) && r.Offset < offset {
		c := r
		c.Key, c.Value = cloneNil(r.Key), cloneNil(r.Value)
		c.Headers = nil
		for _, hd := range r.Headers {
			c.Headers = append(c.Headers, log.Header{Key: hd.Key, Value: cloneNil(hd.Value)})
		}
		keep = append(keep, c)
	}
	return keep, opts, it.Err()
}

// cloneNil copies b, keeping nil distinct from empty.
func cloneNil(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}

// failLocked closes the partition to appends after a failure that may have
// left the active segment in an unknown state.
func (p *Partition) failLocked(err error) error {
	if p.mu.failed == nil {
		p.mu.failed = err
	}
	return fmt.Errorf("partition: %s: %w: %w", p.name, ErrClosed, err)
}
