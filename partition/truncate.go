package partition

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// DeleteRecords advances the start offset to offset, as Kafka's
// DeleteRecords does: reads below it fail with ErrOutOfRange from then on,
// and the whole segments below it are removed later by retention. The new
// start offset is checkpointed (written atomically and fsynced) before it
// takes effect, and the records below it are fsynced before that, so that
// no crash leaves a start offset past the end of the log (which Open takes
// for damage, and ignores). Moving it backwards is a no-op; past
// HighWatermark (what readers see) is ErrOutOfRange.
func (p *Partition) DeleteRecords(offset int64) error {
	if p.cfg.ReadOnly {
		return p.readOnlyError()
	}
	if offset > p.start.Load() && offset <= p.end.Load() {
		if err := p.syncTo(offset); err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return fmt.Errorf("partition: %s: %w", p.name, ErrClosed)
	}
	start, end := p.start.Load(), p.HighWatermark()
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
// result is fsynced; a crash midway leaves a prefix of the log that ends
// at offset or later. Truncating below StartOffset or past EndOffset is
// ErrOutOfRange.
//
// Readers are never disturbed: the rewritten segment goes to new files that
// are renamed over the old names, and a reader holding the old segment keeps
// reading its (unlinked) files until it lets go. Truncate copies the kept
// part of one segment, so it is meant for recovery, tests and tools, not for
// the hot path.
func (p *Partition) Truncate(offset int64) error {
	p.cleanMu.Lock() // no cleaning round overlaps: they share file names
	defer p.cleanMu.Unlock()
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if err := p.flushPendingSyncMuLocked(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.writableMuLocked(); err != nil {
		return fmt.Errorf("partition: %s: %w", p.name, err)
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
	extra, err := p.straddling(old.seg, offset)
	if err != nil {
		return fmt.Errorf("partition: truncating %s: %w", p.name, err)
	}

	// A crash from here on must recover the rewritten segment. Nothing
	// has changed yet if the checkpoint cannot be written.
	if err := writeCheckpoint(p.fsys, p.dir, recoveryPointFile, old.seg.Base()); err != nil {
		return fmt.Errorf("partition: truncating %s: %w", p.name, err)
	}
	p.checkpoint = recoveryCheckpoint{stored: old.seg.Base()} // written; one left due by a failed write may lie past the rewrite
	// The later segments go first, durably: a crash from here on leaves a
	// prefix of the log (this segment whole, or rewritten), never their
	// records behind a hole, which Open would keep in a compacted
	// partition (whose segments may be apart).
	for _, r := range segs[i+1:] {
		if err := r.seg.MarkDeleted(); err != nil {
			return p.failMuLocked(fmt.Errorf("truncating: %w", err))
		}
	}
	if len(segs) > i+1 {
		if err := p.fsys.SyncDir(p.dir); err != nil {
			return p.failMuLocked(fmt.Errorf("truncating: %w", err))
		}
	}
	next, err := old.seg.Rewrite(offset, extra)
	if err != nil {
		return p.failMuLocked(fmt.Errorf("truncating: %w", err))
	}
	ref := newRef(next)
	p.state.Store(&state{segs: append(segs[:i:i], ref)})
	p.mu.active = ref
	p.end.Store(next.NextOffset())
	p.setSynced(next.NextOffset())
	p.mu.keys = nil // AppendIfLast builds it again
	if err := p.loadProducersMuLocked(false, false); err != nil {
		return p.failMuLocked(fmt.Errorf("truncating: %w", err))
	}
	p.appended.broadcast()
	// The old segment's names now belong to the new one: close it when its
	// readers let go, without deleting anything. The later segments'
	// files are unlinked when theirs let go.
	_ = old.release()
	for _, r := range segs[i+1:] {
		r.remove.Store(true)
		_ = r.release()
	}
	if err := p.fsys.SyncDir(p.dir); err != nil {
		return p.failMuLocked(fmt.Errorf("truncating: %w", err))
	}
	return nil
}

// straddling returns the batch of s that holds offset cut down to its
// records below offset — same base offset, a last offset of offset−1, every
// kept record at its own offset with its timestamp and headers, the other
// header fields as they were, and compressed with the batch's codec (at its
// default level) — or nil when offset starts a batch.
// A compacted batch may keep no record below offset: it then stays as an
// empty batch, so that the partition still ends at offset.
func (p *Partition) straddling(s *segment.Segment, offset int64) ([]byte, error) {
	batches, err := s.Read(nil, offset, 1)
	if err != nil || len(batches) == 0 {
		return nil, err
	}
	h, err := log.ReadHeader(batches)
	if err != nil || h.BaseOffset >= offset {
		return nil, err
	}
	dec := log.Decoder{Limit: p.cfg.maxDecompress()}
	it, err := dec.Iter(batches, h)
	if err != nil {
		return nil, err
	}
	var keep []log.Record
	var r log.Record
	maxTS := int64(-1)
	for it.Next(&r) && r.Offset < offset {
		c := r
		c.Timestamp = time.UnixMilli(it.StoredTimestamp())
		c.Key, c.Value = cloneNil(r.Key), cloneNil(r.Value)
		c.Headers = nil
		for _, hd := range r.Headers {
			c.Headers = append(c.Headers, log.Header{Key: hd.Key, Value: cloneNil(hd.Value)})
		}
		keep = append(keep, c)
		maxTS = max(maxTS, it.StoredTimestamp())
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	cut := h
	cut.LastOffsetDelta = int32(offset - 1 - h.BaseOffset)
	if h.TimestampType() == log.CreateTime && maxTS >= 0 {
		cut.MaxTimestamp = maxTS
	}
	return log.EncodeBatchWithHeader(nil, cut, keep)
}

// cloneNil copies b, keeping nil distinct from empty.
func cloneNil(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}

// failMuLocked closes the partition to appends after a failure that may
// have left the active segment in an unknown state. The caller holds mu.
func (p *Partition) failMuLocked(err error) error {
	if p.mu.failed == nil {
		p.mu.failed = err
	}
	return fmt.Errorf("partition: %s: %w: %w", p.name, ErrClosed, err)
}
