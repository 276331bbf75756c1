package partition

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// DefaultRefreshInterval is Config.RefreshInterval's default.
const DefaultRefreshInterval = 100 * time.Millisecond

// A read-only partition (Config.ReadOnly) follows a directory that another
// process owns and may be writing: it never writes, creates, renames or
// removes a file, and holds follower segments (segment.OpenFollow). Its
// state is refreshed lazily, by the calls that read it:
//
//   - every read (ReadBatches, the Reader, Wait, the offsets and Stats)
//     first looks for batches appended to the active segment since the
//     last look: a pread of the header after its last batch, and of the
//     batch if one is there (segment.Extend);
//   - when that finds nothing, and at most once per RefreshInterval, it
//     lists the directory and reads the start offset checkpoint: a new
//     segment (a roll), one removed (retention, DeleteRecords, a topic
//     deleted) or replaced (compaction's swap) makes it open the segment
//     list again, reusing the segments whose files did not change; a file
//     that vanishes meanwhile is normal, and the listing is tried again at
//     the next refresh;
//   - waiting readers (Wait, Records) poll at RefreshInterval.
//
// A reader positioned in a segment that retention removed reads on from
// the segment it still holds until the refresh moves the start offset past
// it: then its next read fails with ErrOutOfRange, as a Kafka consumer
// gets OFFSET_OUT_OF_RANGE.

// openFollow is Open for a read-only partition: dir must exist.
func openFollow(fsys vfs.FS, dir string, cfg Config) (*Partition, error) {
	fi, err := fsys.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	if !fi.IsDir {
		return nil, fmt.Errorf("partition: %s is not a directory: %w", dir, ErrInvalidConfig)
	}
	p := &Partition{fsys: fsys, dir: dir, name: filepath.Base(dir), cfg: cfg}
	p.group.cond.L = &p.group.mu
	p.state.Store(&state{})
	p.mu.Lock()
	defer p.mu.Unlock()
	var last error
	for range 5 {
		// A listing that a change under way made inconsistent (a file
		// gone between the listing and its open) is tried again.
		if last = p.rescanMuLocked(); !errors.Is(last, errChanged) {
			break
		}
	}
	if last != nil {
		releaseAll(p.state.Load().segs)
		return nil, last
	}
	p.follow.scanned = time.Now()
	p.follow.topicID = dirTopicID(fsys, dir)
	return p, nil
}

// metadataFile names the topic id in a partition's directory (package
// topic writes it, in Kafka's format).
const metadataFile = "partition.metadata"

// dirTopicID returns the topic id dir's partition.metadata names, "" if
// it names none readably.
func dirTopicID(fsys vfs.FS, dir string) string {
	data, err := vfs.ReadFile(fsys, filepath.Join(dir, metadataFile))
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		if key, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(key) == "topic_id" {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// errChanged means the directory changed while a refresh read it.
var errChanged = errors.New("partition: directory changed during the refresh")

// refresh refreshes a read-only partition (see above); callers check
// cfg.ReadOnly first, so that a partition that owns its directory pays a
// branch.
func (p *Partition) refresh() {
	if p.done.Load() || !p.mu.TryLock() {
		// Another goroutine refreshes: this read sees what it saw.
		return
	}
	defer p.mu.Unlock()
	if p.mu.closed {
		return
	}
	grew := false
	if a := p.mu.active; a != nil {
		g, err := a.seg.Extend()
		if err != nil {
			p.follow.err = err
		}
		if g {
			grew = true
			p.end.Store(a.seg.NextOffset())
		}
	}
	full := p.mu.active != nil && p.mu.active.seg.Full()
	if !grew && (full || time.Since(p.follow.scanned) >= p.cfg.RefreshInterval) {
		p.follow.scanned = time.Now()
		before := p.end.Load()
		if err := p.rescanMuLocked(); err != nil && !errors.Is(err, errChanged) {
			p.follow.err = err
		}
		grew = p.end.Load() != before
	}
	if grew && p.follow.txns {
		p.followProducersMuLocked()
	}
	if grew {
		p.appended.broadcast()
	}
}

// followTxns makes a read-only partition follow its producers'
// transactions from now on, for ReadCommitted reads: the state is rebuilt
// from the owner's latest producer snapshot at or below the end and the
// log after it, and refreshes replay what they add. The first call pays
// the rebuild; later ones return at once.
func (p *Partition) followTxns() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.follow.txns || p.mu.closed {
		return
	}
	p.follow.txns = true
	p.mu.producers = producerState{}
	p.follow.producersAt = 0
	end := p.end.Load()
	snaps := snapshotOffsets(p.follow.names)
	for i := len(snaps) - 1; i >= 0; i-- {
		off := snaps[i]
		if off > end {
			continue
		}
		data, err := vfs.ReadFile(p.fsys, p.snapshotPath(off))
		if err != nil {
			continue // removed meanwhile (retention), or unreadable: an earlier one
		}
		ps, err := decodeSnapshot(data)
		if err != nil {
			continue
		}
		p.mu.producers = ps
		p.follow.producersAt = off
		break
	}
	p.followProducersMuLocked()
}

// followProducersMuLocked replays into the producer state the batches of
// the log it has not seen yet, entering the ABORT markers among them into
// the segments' aborted transactions (in memory: see
// segment.AppendAbortedTxn). The caller holds mu.
func (p *Partition) followProducersMuLocked() {
	end := p.end.Load()
	if from := p.follow.producersAt; from < end {
		if err := p.replayProducersMuLocked(from, true); err != nil {
			p.follow.err = err
		}
	}
	p.follow.producersAt = end
	p.publishTxnsMuLocked()
}

// followState is what a read-only partition keeps between refreshes.
type followState struct {
	names   []string  // the directory's listing at the last rescan
	start   int64     // the start offset checkpoint then
	scanned time.Time // when the directory was last listed
	err     error     // the last refresh's failure, for Stats' logs
	// txns is set once a ReadCommitted read needed the producer state
	// (see followTxns); producersAt is the offset the state covers the
	// log up to.
	txns        bool
	producersAt int64
	// topicID is the topic id the directory named at the open, "" if
	// none; gone is set once it names another: the topic was deleted and
	// one of the name made since, whose segments are not this one's.
	topicID string
	gone    bool
}

// rescanMuLocked lists the directory and, if it changed, opens the
// segment list again. The caller holds mu.
func (p *Partition) rescanMuLocked() error {
	if p.follow.gone {
		return nil // what was read stays readable, as for a deleted topic
	}
	names, err := p.fsys.ReadDir(p.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil // the topic was deleted: what was read stays readable
	}
	if err != nil {
		return fmt.Errorf("partition: listing %s: %w", p.name, err)
	}
	start, err := readCheckpoint(p.fsys, p.dir, startOffsetFile, 0)
	if err != nil {
		start = p.follow.start // a checkpoint being replaced, or damaged: the last one read
	}
	old := p.state.Load()
	if slices.Equal(names, p.follow.names) && len(old.segs) > 0 && !old.segs[len(old.segs)-1].seg.Full() {
		if start != p.follow.start {
			p.follow.start = start
			p.start.Store(max(start, old.segs[0].seg.Base()))
		}
		return nil
	}
	if p.follow.topicID != "" {
		if id := dirTopicID(p.fsys, p.dir); id != "" && id != p.follow.topicID {
			p.follow.gone = true
			return nil
		}
	}
	rp, err := readCheckpoint(p.fsys, p.dir, recoveryPointFile, -1)
	if err != nil {
		rp = -1 // trust nothing
	}
	var bases []int64
	for _, name := range names {
		if base, suffix, err := segment.ParseFileName(name); err == nil && suffix == segment.LogSuffix {
			bases = append(bases, base)
		}
	}
	slices.Sort(bases)
	// The segments below the one holding the recovery point are sealed
	// and synced: their files are final (as Open trusts them).
	from := 0
	for i, base := range bases {
		if rp >= 0 && base <= rp {
			from = i
		}
	}
	byBase := map[int64]*segRef{}
	for _, r := range old.segs {
		byBase[r.seg.Base()] = r
	}
	scfg := p.cfg.segmentConfig()
	var segs []*segRef
	fail := func(err error) error {
		releaseAll(segs)
		return err
	}
	for i, base := range bases {
		last := i == len(bases)-1
		if n := len(segs); n > 0 && segs[n-1].seg.NextOffset() > base {
			// Covered by the segment before it: compaction's swap put
			// that one in place and has not removed this one yet.
			continue
		}
		if r := byBase[base]; r != nil && p.reusable(r, last) && r.acquire() {
			segs = append(segs, r)
			continue
		}
		s, err := segment.OpenFollow(p.fsys, p.dir, base, scfg, i < from && !last)
		if err == nil && byBase[base] != nil {
			// Reopened: the aborted transactions learnt from markers
			// stay known (the owner's .txnindex may not have them yet).
			for _, t := range byBase[base].seg.AbortedTxns() {
				if t.LastOffset < s.NextOffset() {
					_ = s.AppendAbortedTxn(t)
				}
			}
		}
		if err != nil && i < from && !errors.Is(err, os.ErrNotExist) {
			// A trusted segment that fails its shape check: scan it.
			s, err = segment.OpenFollow(p.fsys, p.dir, base, scfg, false)
		}
		if errors.Is(err, os.ErrNotExist) {
			return fail(errChanged)
		}
		if err != nil {
			return fail(fmt.Errorf("partition: opening segment %d of %s: %w", base, p.name, err))
		}
		segs = append(segs, newRef(s))
	}
	if len(segs) == 0 {
		if len(old.segs) == 0 {
			return fmt.Errorf("partition: %s holds no segment: %w", p.name, errChanged)
		}
		return errChanged // between a removal and a creation: keep what was there
	}
	for _, r := range segs[:len(segs)-1] {
		r.seg.SetFinal() // the owner writes no more to a segment a later one follows
	}
	active := segs[len(segs)-1]
	p.state.Store(&state{segs: segs})
	p.mu.active = active
	p.follow.names, p.follow.start = names, start
	p.start.Store(max(start, segs[0].seg.Base()))
	p.end.Store(active.seg.NextOffset())
	for _, r := range old.segs {
		_ = r.release()
	}
	if p.follow.txns {
		p.followProducersMuLocked()
	}
	return nil
}

// reusable reports whether the open follower segment r still is the one
// whose files the directory holds, up to date: a segment that was being
// written takes its last batches first. last says it is the active one.
func (p *Partition) reusable(r *segRef, last bool) bool {
	same, known := r.seg.SameFile()
	if known && !same {
		return false // compaction's replacement, under the same name
	}
	if _, err := r.seg.Extend(); err != nil || r.seg.Full() {
		return false
	}
	if last || known {
		return true
	}
	// Where the files cannot be told apart: a sealed segment's file holds
	// its batches exactly, and another size is another file.
	fi, err := p.fsys.Stat(r.seg.Path())
	return err == nil && fi.Size == r.seg.Size()
}

// closeFollow is Close for a read-only partition: it only lets go of the
// files.
func (p *Partition) closeFollow() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return nil
	}
	p.mu.closed = true
	p.done.Store(true)
	p.appended.broadcast()
	for _, r := range p.state.Load().segs {
		_ = r.release()
	}
	return nil
}

// followDamage is the damage a read-only partition's refresh found after
// the last valid batch of the segment st.segs[i] (segment.TailDamage), for
// a read at offset that reached it; nil if none.
func (p *Partition) followDamage(st *state, i int, offset int64) error {
	if i < 0 || i >= len(st.segs) {
		return nil
	}
	if err := st.segs[i].seg.TailDamage(); err != nil {
		return fmt.Errorf("partition: reading %s at %d: %w", p.name, offset, err)
	}
	return nil
}

// readOnlyError is the error of a write to a read-only partition.
func (p *Partition) readOnlyError() error {
	return fmt.Errorf("partition: %s: %w", p.name, ErrReadOnly)
}

// pollWait waits for ch, RefreshInterval or the end of ctx (ctx.Err()).
func (p *Partition) pollWait(ctx context.Context, ch <-chan struct{}) error {
	t := time.NewTimer(p.cfg.RefreshInterval)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}
