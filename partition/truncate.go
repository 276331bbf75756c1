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
// cut (a batch that straddles offset is rewritten with its records below
// offset, keeping their timestamps and headers). The result is fsynced.
// Truncating below StartOffset or past EndOffset is ErrOutOfRange.
//
// Truncate waits for reads in progress to finish and holds new ones until it
// is done: it shrinks files under their memory mappings. It is meant for
// recovery, tests and tools, not for the hot path.
func (p *Partition) Truncate(offset int64) error {
	p.exclusive.Lock()
	defer p.exclusive.Unlock()
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

	// The records of the straddling batch that stay, copied before the cut.
	keep, opts, err := p.straddling(segs[i].seg, offset)
	if err != nil {
		return err
	}

	// Later segments go, with their files.
	for _, r := range segs[i+1:] {
		r.remove.Store(true)
		if err := r.release(); err != nil {
			return p.failLocked(fmt.Errorf("truncating: %w", err))
		}
	}
	// The segment holding offset becomes the active one, writable.
	ref := segs[i]
	if ref.seg.Sealed() {
		base := ref.seg.Base()
		if err := ref.release(); err != nil {
			return p.failLocked(fmt.Errorf("truncating: %w", err))
		}
		s, err := segment.Open(p.fsys, p.dir, base, p.cfg.segmentConfig(), true)
		if err != nil {
			return p.failLocked(fmt.Errorf("truncating: %w", err))
		}
		ref = newRef(s)
	}
	newSegs := append(segs[:i:i], ref)
	p.state.Store(&state{segs: newSegs})
	p.mu.active = ref

	if err := ref.seg.Truncate(offset); err != nil {
		return p.failLocked(fmt.Errorf("truncating: %w", err))
	}
	if len(keep) > 0 {
		batch, err := log.AppendBatch(nil, keep, opts)
		if err == nil {
			log.SetBaseOffset(batch, keep[0].Offset)
			err = ref.seg.Append(batch)
		}
		if err != nil {
			return p.failLocked(fmt.Errorf("truncating: rewriting the batch at %d: %w", keep[0].Offset, err))
		}
	}
	if err := ref.seg.Sync(); err != nil {
		return p.failLocked(fmt.Errorf("truncating: %w", err))
	}
	if err := p.fsys.SyncDir(p.dir); err != nil {
		return p.failLocked(fmt.Errorf("truncating: %w", err))
	}
	// The active segment may now be an older one: recovery must start there.
	if err := writeCheckpoint(p.fsys, p.dir, recoveryPointFile, ref.seg.Base()); err != nil {
		return p.failLocked(fmt.Errorf("truncating: %w", err))
	}
	p.end.Store(ref.seg.NextOffset())
	p.synced.Store(ref.seg.NextOffset())
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
