package partition

import (
	"context"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/segment"
)

// ReadBatches appends to buf[:0] whole batches from offset on, up to about
// maxBytes (always at least one batch), and returns them. The first batch may
// start before offset: skip its earlier records (a Reader does). Only
// batches below the high watermark are returned: reading at HighWatermark
// (or past it, up to EndOffset) returns no bytes; an offset outside
// [StartOffset, EndOffset] is ErrOutOfRange, with the range readers see in
// the message.
//
// Every batch is checked (header rules, offsets that follow one another,
// and its CRC the first time the process reads it, unless the process
// appended it); the bytes are a copy, valid until buf is reused. A read
// returns the intact batches before a damaged one without an error; the
// read that starts at the damaged batch fails. ReadBatches never takes the
// appenders' lock and allocates nothing when buf is large enough.
func (p *Partition) ReadBatches(buf []byte, offset int64, maxBytes int) ([]byte, error) {
	batches, ref, err := p.viewBatches(offset, maxBytes)
	if err != nil || ref == nil {
		return buf[:0], err
	}
	out := append(buf[:0], batches...)
	_ = ref.release()
	return out, nil
}

// Pin is a reader's hold on a segment: the memory mapping that the batches
// of ViewBatches alias stays mapped, and the segment's files stay on disk
// (unlinked, if retention, compaction or Truncate dropped the segment
// meanwhile, or the partition closed), until Release. A Pin is safe for
// concurrent use.
type Pin struct {
	ref  *segRef
	done atomic.Bool
}

// Release lets the segment go: the last reader of a dropped segment
// closes and removes it. Releasing again, or a nil Pin, does nothing.
func (h *Pin) Release() {
	if h != nil && h.done.CompareAndSwap(false, true) {
		_ = h.ref.release()
	}
}

// ViewBatches is ReadBatches without the copy: the batches alias the
// memory mapping of the segment they come from, read-only, valid until
// the Pin is released, which the caller must do (a Pin never released
// keeps a dropped segment's disk space). No batches is a nil Pin.
func (p *Partition) ViewBatches(offset int64, maxBytes int) ([]byte, *Pin, error) {
	batches, ref, err := p.viewBatches(offset, maxBytes)
	if err != nil || ref == nil {
		return nil, nil, err
	}
	return batches, &Pin{ref: ref}, nil
}

// viewBatches is ReadBatches without the copy: the batches alias the memory
// mapping of the segment they come from, which the returned reference keeps
// open until the caller releases it. No batches means no reference.
func (p *Partition) viewBatches(offset int64, maxBytes int) ([]byte, *segRef, error) {
	var out []byte
	var held *segRef
	_, err := p.fromSegment(offset, func(_ *state, _ int, r *segRef, hw int64) (bool, error) {
		var err error
		out, err = r.seg.View(offset, maxBytes, hw)
		held = r
		return len(out) > 0, err
	})
	if err != nil || len(out) == 0 {
		return nil, nil, err
	}
	p.stats.reads.Add(1)
	p.stats.readBytes.Add(int64(len(out)))
	return out, held, nil
}

// fromSegment offers try the segments of a snapshot from the one whose
// base is the last at or below offset on, each with a reference taken and
// the high watermark the snapshot was taken under, until try keeps one
// (true: the reference is then the caller's) or fails (the reference is
// released and the error returned, naming the partition). A segment dropped
// meanwhile makes it start over on a fresh snapshot. It reports false, with
// no error, when offset is at or past the high watermark (up to EndOffset)
// or no segment was kept, and ErrOutOfRange when offset is outside
// [StartOffset, EndOffset].
func (p *Partition) fromSegment(offset int64, try func(st *state, i int, r *segRef, hw int64) (bool, error)) (bool, error) {
	for {
		if err := p.checkOpen(); err != nil {
			return false, err // Close released the segments
		}
		st, start, end := p.readable()
		if offset < start || offset > max(end, p.end.Load()) {
			return false, fmt.Errorf("partition: offset %d of %s out of range [%d, %d]: %w", offset, p.name, start, end, ErrOutOfRange)
		}
		if offset >= end {
			// At the high watermark, or past it but not past the end
			// offset (an fsync in flight under SyncAlways): nothing to
			// read yet, as Kafka answers a fetch between the two.
			if p.cfg.ReadOnly {
				return false, p.followDamage(st, len(st.segs)-1, offset)
			}
			return false, nil
		}
		i := sort.Search(len(st.segs), func(i int) bool { return st.segs[i].seg.Base() > offset }) - 1
		retry := false
		for i = max(i, 0); i < len(st.segs); i++ {
			r := st.segs[i]
			if !r.acquire() {
				retry = true // dropped meanwhile: reload the snapshot
				break
			}
			keep, err := try(st, i, r, end)
			if err != nil {
				_ = r.release()
				return false, fmt.Errorf("partition: reading %s at %d: %w", p.name, offset, err)
			}
			if keep {
				return true, nil
			}
			_ = r.release()
			if p.cfg.ReadOnly && offset >= r.seg.NextOffset() {
				if err := p.followDamage(st, i, offset); err != nil {
					return false, err
				}
			}
		}
		if !retry && p.state.Load() == st {
			return false, nil
		}
	}
}

// Wait blocks until readers see offset (HighWatermark > offset), the
// partition is closed (ErrClosed) or ctx ends (ctx.Err()).
func (p *Partition) Wait(ctx context.Context, offset int64) error {
	return p.WaitIsolation(ctx, offset, ReadUncommitted)
}

// WaitIsolation is Wait for a reader of level iso: under ReadCommitted it
// waits until the last stable offset (at most the high watermark) passes
// offset.
func (p *Partition) WaitIsolation(ctx context.Context, offset int64, iso Isolation) error {
	for {
		ch := p.appended.wait()
		if p.VisibleEnd(iso) > offset {
			return nil
		}
		if err := p.checkOpen(); err != nil {
			return err
		}
		if p.cfg.ReadOnly {
			// Nothing in this process appends: look again later.
			if st := p.state.Load(); len(st.segs) > 0 {
				if err := p.followDamage(st, len(st.segs)-1, offset); err != nil {
					return err
				}
			}
			if err := p.pollWait(ctx, ch); err != nil {
				return err
			}
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// OffsetForTimestamp returns the first offset, in offset order from the
// start offset and below the high watermark, whose record timestamp is at
// least ts (ms), with that timestamp, as Kafka's ListOffsets by time does;
// found is false when no record is that late.
func (p *Partition) OffsetForTimestamp(ts int64) (offset, timestamp int64, found bool, err error) {
	for {
		if err := p.checkOpen(); err != nil {
			return -1, -1, false, err
		}
		st, start, hw := p.readable()
		retry := false
		dec := log.Decoder{Limit: p.cfg.maxDecompress()}
		for _, r := range st.segs {
			if r.seg.NextOffset() <= start || r.seg.MaxTimestamp() < ts {
				continue
			}
			if !r.acquire() {
				retry = true
				break
			}
			off, t, ok, err := r.seg.FindOffsetByTimestamp(ts, start, hw, &dec)
			_ = r.release()
			if err != nil || ok {
				return off, t, ok, err
			}
		}
		if !retry {
			return -1, -1, false, nil
		}
	}
}

// OffsetForMaxTimestamp returns the first offset, in offset order from the
// start offset and below both the high watermark and limit, of a record
// with the largest record timestamp there, with that timestamp, as
// Kafka's ListOffsets with MAX_TIMESTAMP (KIP-734) does; control batches
// (transaction markers) are passed over. found is false when there is no
// record. The segment with the largest timestamp usually holds a record
// of that timestamp, which its time index finds; when it does not (the
// largest is a marker's, or above limit), the batch headers of the
// segments whose largest timestamp could hold the record are read.
func (p *Partition) OffsetForMaxTimestamp(limit int64) (offset, timestamp int64, found bool, err error) {
	if off, ts, ok, err := p.maxTimestampFast(limit); err != nil || ok {
		return off, ts, ok, err
	}
	best := int64(-1)
	for {
		if err := p.checkOpen(); err != nil {
			return -1, -1, false, err
		}
		st, start, hw := p.readable()
		limit := min(limit, hw)
		order := make([]*segRef, 0, len(st.segs))
		for _, r := range st.segs {
			if r.seg.NextOffset() > start && r.seg.Base() < limit {
				order = append(order, r)
			}
		}
		sort.SliceStable(order, func(i, j int) bool { return order[i].seg.MaxTimestamp() > order[j].seg.MaxTimestamp() })
		retry := false
		for _, r := range order {
			if r.seg.MaxTimestamp() <= best {
				break
			}
			if !r.acquire() {
				retry = true
				break
			}
			m, err := maxDataTimestamp(r.seg, max(start, r.seg.Base()), limit)
			_ = r.release()
			if err != nil {
				return -1, -1, false, fmt.Errorf("partition: reading %s: %w", p.name, err)
			}
			best = max(best, m)
		}
		if !retry {
			break
		}
	}
	if best < 0 {
		return -1, -1, false, nil
	}
	return p.OffsetForTimestamp(best)
}

// maxTimestampFast looks for a record, below the high watermark and
// limit, of the largest timestamp of the segments, in the first segment
// that reaches it; ok is false when that segment holds none.
func (p *Partition) maxTimestampFast(limit int64) (offset, timestamp int64, ok bool, err error) {
	if err := p.checkOpen(); err != nil {
		return -1, -1, false, err
	}
	st, start, hw := p.readable()
	limit = min(limit, hw)
	var top *segRef
	for _, r := range st.segs {
		if r.seg.NextOffset() > start && r.seg.Base() < limit && (top == nil || r.seg.MaxTimestamp() > top.seg.MaxTimestamp()) {
			top = r
		}
	}
	if top == nil || top.seg.MaxTimestamp() < 0 || !top.acquire() {
		return -1, -1, false, nil
	}
	defer func() { _ = top.release() }()
	dec := log.Decoder{Limit: p.cfg.maxDecompress()}
	off, ts, ok, err := top.seg.FindOffsetByTimestamp(top.seg.MaxTimestamp(), start, limit, &dec)
	if err != nil {
		return -1, -1, false, fmt.Errorf("partition: reading %s: %w", p.name, err)
	}
	return off, ts, ok, nil
}

// maxDataTimestamp returns the largest max timestamp of the data batches
// (not control) of seg from offset on and below limit, -1 if none.
func maxDataTimestamp(seg *segment.Segment, from, limit int64) (int64, error) {
	best := int64(-1)
	for {
		batches, err := seg.View(from, 1<<20, limit)
		if err != nil || len(batches) == 0 {
			return best, err
		}
		was := from
		bi := log.NewBatchIter(batches)
		for bi.Next() {
			h := bi.Header()
			from = h.NextOffset()
			if !h.IsControl() {
				best = max(best, h.MaxTimestamp)
			}
		}
		if err := bi.Err(); err != nil {
			return best, err
		}
		if from <= was {
			return best, nil // nothing past from: never loop in place
		}
	}
}

// readable returns a snapshot of the segments and the offsets a reader may
// read in it: [start, hw), from the start offset (and the first segment) to
// the high watermark. The high watermark is loaded first, so every batch
// below it is in the snapshot's segments (a roll adds the new segment
// before anything appended to it can become visible).
func (p *Partition) readable() (st *state, start, hw int64) {
	hw = p.HighWatermark()
	st = p.state.Load()
	start = p.start.Load()
	if len(st.segs) > 0 {
		start = max(start, st.segs[0].seg.Base())
	}
	return st, start, hw
}
