package partition

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/stratalog/strata/compaction"
	"github.com/stratalog/strata/segment"
)

// Checkpoint files of compaction.
const (
	// cleanerOffsetFile holds the first dirty offset: where the next
	// cleaning starts mapping keys (Kafka's cleaner-offset-checkpoint).
	cleanerOffsetFile = "cleaner-offset"
	// swapEndFile holds, while a swap is in flight, the offset after the
	// segments it replaces, so that Open completes it over the whole range
	// even if the cleaned output ends earlier.
	swapEndFile = "swap-end"
)

// Compact cleans a compacted partition once if package compaction's plan
// says it is due (the dirty ratio, or a record older than MaxCompactionLag):
// it keeps the latest record of every key (and tombstones until their delete
// horizon), in new segments that preserve every offset and batch boundary,
// and swaps them in with Kafka's crash-safe protocol: .cleaned files, synced,
// renamed to .swap, the replaced segments renamed .deleted or overwritten by
// rename, then the .swap files renamed into place. Readers are never
// disturbed: they keep the old segments until they let go. The active
// segment is never cleaned, nor anything at or past the last stable
// offset. Transactions are cleaned as Kafka's cleaner cleans them: the
// records of aborted transactions go (their keys never supersede a
// committed record), committed ones are records like any other, and a
// transaction's marker stays while records it decides do (see package
// compaction). It returns what the cleaning did; a partition
// that is not compacted, or not due, returns zero Stats.
//
// One cleaning runs at a time; appends, reads and retention go on meanwhile.
func (p *Partition) Compact(now time.Time, cfg compaction.Config) (compaction.Stats, error) {
	var stats compaction.Stats
	if !p.cfg.Compacted {
		return stats, nil
	}
	p.cleanMu.Lock()
	defer p.cleanMu.Unlock()
	cfg.DecompressLimit = p.cfg.maxDecompress() // the cleaner reads what the partition took

	// Hold every sealed segment for the round.
	p.mu.Lock()
	if err := p.writableMuLocked(); err != nil {
		p.mu.Unlock()
		return stats, fmt.Errorf("partition: compacting %s: %w", p.name, err)
	}
	all := p.state.Load().segs
	var held []*segRef
	for _, r := range all[:len(all)-1] {
		if r.acquire() {
			held = append(held, r)
		}
	}
	infos := make([]compaction.SegmentInfo, len(all))
	for i, r := range all {
		infos[i] = compaction.Info(r.seg)
	}
	start := p.start.Load()
	live := p.liveProducerOffsetsMuLocked()
	p.mu.Unlock()
	defer releaseAll(held)
	if len(held) != len(all)-1 {
		return stats, nil // a segment went meanwhile: try again later
	}

	firstDirty, _, err := p.loadCheckpoint(cleanerOffsetFile, start, "cleaning from the start")
	if err != nil {
		return stats, err
	}
	plan := compaction.Assess(infos, max(firstDirty, start), now, cfg)
	// Never past the last stable offset, as Kafka's
	// LogCleanerManager.cleanableOffsets has it: below it every
	// transaction is complete, so its batches are either aborted (named
	// by a .txnindex) or data.
	if lso := p.LastStableOffset(); plan.FirstUncleanable > lso {
		plan.FirstUncleanable = max(lso, plan.FirstDirty)
	}
	if !plan.Cleanable || plan.FirstUncleanable <= plan.FirstDirty {
		return stats, nil
	}
	aborted := p.AbortedTxns(start, p.EndOffset())
	segs := make([]*segment.Segment, len(held))
	for i, r := range held {
		segs[i] = r.seg
	}
	m := cfg.NewOffsetMap()
	end, err := compaction.BuildMapAborted(m, segs, plan.FirstDirty, plan.FirstUncleanable, cfg.DecompressLimit, aborted)
	if err != nil {
		return stats, fmt.Errorf("partition: compacting %s: %w", p.name, err)
	}
	round := compaction.Round{Config: cfg, Map: m, End: end, Now: now, Aborted: aborted, ProducerLastOffsets: live}
	scfg := p.cfg.segmentConfig()
	create := func(base int64) (*segment.Segment, error) {
		return segment.CreateTemp(p.fsys, p.dir, base, segment.CleanedSuffix, scfg)
	}
	for _, span := range compaction.Group(infos[:len(held)], end, p.cfg.SegmentBytes, p.cfg.MaxIndexBytes) {
		src := held[span.Start:span.End]
		outs, st, err := compaction.Clean(segs[span.Start:span.End], create, round)
		if err != nil {
			return stats, fmt.Errorf("partition: compacting %s: %w", p.name, err)
		}
		stats.Add(st)
		if err := p.swap(src, outs); err != nil {
			return stats, err
		}
	}
	if err := writeCheckpoint(p.fsys, p.dir, cleanerOffsetFile, end); err != nil {
		return stats, err
	}
	return stats, nil
}

// swap puts the cleaned segments outs (sealed, synced, under .cleaned
// names) in the place of src, a run of the partition's segments.
func (p *Partition) swap(src []*segRef, outs []*segment.Segment) error {
	bases := make([]int64, len(outs))
	for i, o := range outs {
		bases[i] = o.Base()
		_ = o.Close()
	}
	discard := func() {
		for _, b := range bases {
			for _, suffix := range []string{segment.CleanedSuffix, segment.SwapSuffix} {
				_ = segment.RemoveFiles(p.fsys, p.dir, b, suffix)
			}
		}
	}
	// Everything from here happens under the partition's lock, so that
	// retention and truncation (which take it too) cannot remove a source
	// segment between the check and the swap: a crash then completes a
	// swap whose sources were all still live.
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.writableMuLocked(); err != nil {
		discard()
		return fmt.Errorf("partition: compacting %s: %w", p.name, err)
	}
	cur := p.state.Load().segs
	at := slices.Index(cur, src[0])
	if at < 0 || at+len(src) > len(cur) || !slices.Equal(cur[at:at+len(src)], src) {
		// Retention or a truncation took some of the segments meanwhile.
		discard()
		return nil
	}
	srcEnd := src[len(src)-1].seg.NextOffset()
	if err := writeCheckpoint(p.fsys, p.dir, swapEndFile, srcEnd); err != nil {
		discard()
		return err
	}
	// .cleaned → .swap, the highest base first (Kafka renames them in
	// descending order): from here on, Open completes the swap.
	for i := len(bases) - 1; i >= 0; i-- {
		if err := segment.RenameTemp(p.fsys, p.dir, bases[i], segment.CleanedSuffix, segment.SwapSuffix); err != nil {
			discard()
			return p.failMuLocked(fmt.Errorf("compacting: %w", err))
		}
	}
	// The replaced segments whose names the output does not reuse go to
	// .deleted; the others are overwritten by the renames below.
	replaced := map[int64]bool{}
	for _, b := range bases {
		replaced[b] = true
	}
	for _, r := range src {
		if !replaced[r.seg.Base()] {
			if err := r.seg.MarkDeleted(); err != nil {
				return p.failMuLocked(fmt.Errorf("compacting: %w", err))
			}
		}
	}
	refs := make([]*segRef, len(bases))
	for _, b := range bases {
		if err := segment.RenameTemp(p.fsys, p.dir, b, segment.SwapSuffix, ""); err != nil {
			return p.failMuLocked(fmt.Errorf("compacting: %w", err))
		}
	}
	for i, b := range bases {
		s, err := segment.Open(p.fsys, p.dir, b, p.cfg.segmentConfig(), false)
		if err != nil {
			return p.failMuLocked(fmt.Errorf("compacting: %w", err))
		}
		refs[i] = newRef(s)
	}
	next := slices.Concat(cur[:at], refs, cur[at+len(src):])
	p.state.Store(&state{segs: next})
	for _, r := range src {
		r.remove.Store(!replaced[r.seg.Base()])
		_ = r.release()
	}
	return p.removeSwapEnd()
}

// removeSwapEnd removes the swap-end checkpoint once no swap is in flight.
func (p *Partition) removeSwapEnd() error {
	err := p.fsys.Remove(filepath.Join(p.dir, swapEndFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("partition: removing %s: %w", swapEndFile, err)
	}
	return p.fsys.SyncDir(p.dir)
}
