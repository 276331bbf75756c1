package partition

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stratalog/strata/segment"
	"github.com/stratalog/strata/vfs"
)

// Open opens the partition in dir, creating the directory and a first
// segment if needed.
//
// clean says whether the process that last wrote the partition shut down
// cleanly (the store's clean-shutdown marker). If it did, the segments are
// trusted as they were closed. If not, every segment from the checkpointed
// recovery point on (the segments a roll sealed but whose fsync may not have
// finished, and the last one) is recovered: every batch is checked, the file
// is cut at the first torn or damaged batch, and both indexes are rebuilt.
// Without a checkpoint every segment is recovered. Any earlier segment whose
// files fail their shape check, or that lacks an index file, is recovered
// too (a missing index file is rebuilt from the log). Once a segment past
// the recovery point loses bytes, every later segment is deleted, as
// Kafka's recovery does (what followed an unsynced tail cannot stay); a
// segment below it, or one of a partition without a recovery point, loses
// only its own damaged tail, and the later segments stay (offsets only have
// to rise). What recovery did is logged.
//
// A checkpoint file is never a reason to delete records: one that holds no
// offset is logged, removed or rewritten, and taken for missing (the partition starts at its first segment; a lost
// recovery point means every segment is recovered), and so is a start
// offset past the end of the log. One the disk fails to read (an I/O
// error) fails Open instead, since distrusting a start offset would bring
// deleted records back. Temporary files that an interrupted checkpoint
// write left are removed.
//
// The producer state (see AppendProduced) comes from the latest producer
// snapshot at or below the end of the log, and the log after it; a
// snapshot past the end, or one that fails its checks, is removed (the
// latter logged) and the one before it used. A clean open without any
// snapshot takes the state for empty without reading the log (as Kafka
// does on an upgrade); one after a crash reads the whole log. Producers
// idle for longer than Config.ProducerIDExpiration are forgotten.
func Open(fsys vfs.FS, dir string, cfg Config, clean bool) (*Partition, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.ReadOnly {
		return openFollow(fsys, dir, cfg)
	}
	if cfg.Sync.Mode == SyncModeNever {
		fsys = vfs.NoSync(fsys) // no fsync of data, indexes, checkpoints or directories
	}
	p := &Partition{fsys: fsys, dir: dir, name: filepath.Base(dir), cfg: cfg}
	p.group.cond.L = &p.group.mu
	bases, recoverBases, listed, err := p.scanDir()
	if err != nil {
		return nil, err
	}
	// A checkpoint that holds no offset is taken for missing: the start at
	// the first segment, every segment recovered after a crash.
	start, _, err := listed.loadCheckpoint(p, startOffsetFile, 0, "starting at the first segment")
	if err != nil {
		return nil, err
	}
	rpAction := "recovering every segment"
	if clean {
		rpAction = "rewriting it"
	}
	rp, rpLost, err := listed.loadCheckpoint(p, recoveryPointFile, -1, rpAction)
	if err != nil {
		return nil, err
	}
	p.checkpoint.stored = rp
	if cfg.Compacted {
		if _, _, err := listed.loadCheckpoint(p, cleanerOffsetFile, 0, "cleaning from the start"); err != nil {
			return nil, err
		}
	}
	segs, err := p.openSegments(bases, clean, rp, recoverBases, listed)
	if err != nil {
		return nil, err
	}
	if n := len(segs); n > 0 && segs[n-1].seg.NextOffset() < start {
		// The start offset lies past the end of the log, which no crash
		// leaves (DeleteRecords syncs the records below it first): the
		// checkpoint or the log is damaged, and the records are worth more
		// than the checkpoint.
		p.distrustCheckpoint(startOffsetFile, "starting at the first segment",
			"start_offset", start, "log_end", segs[n-1].seg.NextOffset())
		start = 0
	}
	rolled := false
	if n := len(segs); n > 0 && segs[n-1].seg.Damaged() != nil {
		// Damage Open stepped over in the last segment: an append after it
		// in the same file would be lost to a recovery after a crash, which
		// cuts the file at the damage. Seal the segment and append to a new
		// one, as a roll does.
		last := segs[n-1].seg
		err := last.Seal()
		if err == nil {
			err = last.Sync()
		}
		var s *segment.Segment
		if err == nil {
			s, err = segment.Create(fsys, dir, last.NextOffset(), cfg.segmentConfig())
		}
		if err != nil {
			releaseAll(segs)
			return nil, fmt.Errorf("partition: rolling past the damaged segment %d of %s: %w", last.Base(), p.name, err)
		}
		segs = append(segs, newRef(s))
		rolled = true
	}
	if len(segs) == 0 {
		create := segment.Create
		if !listed.segmentFiles(start) {
			create = segment.CreateNew
		}
		s, err := create(fsys, dir, start, cfg.segmentConfig())
		if err != nil {
			return nil, err
		}
		segs = append(segs, newRef(s))
	}

	active := segs[len(segs)-1]
	p.mu.active = active
	p.state.Store(&state{segs: segs})
	p.start.Store(max(start, segs[0].seg.Base()))
	p.end.Store(active.seg.NextOffset())
	p.setSynced(active.seg.NextOffset())
	if err := p.loadProducersMuLocked(clean, !clean); err != nil {
		releaseAll(segs)
		return nil, err
	}
	if !clean || rpLost || rolled {
		// Everything below the active segment is now checked and synced.
		// A checkpoint that cannot be written (a full disk) stays due, as
		// after a roll: it only makes the next recovery start earlier.
		p.checkpoint.set(active.seg.Base())
		p.checkpointSyncMuLocked()
	}
	p.startBackground()
	return p, nil
}

// scanDir lists the base offsets of the partition's segments, and which of
// them must be recovered, after cleaning up what a crash may have left, as
// Kafka's LogLoader.load does
// (storage/src/main/java/org/apache/kafka/storage/internals/log/LogLoader.java):
// files scheduled for deletion (.deleted) go; unfinished rewrite or
// compaction output (.cleaned) goes, with any .swap at or above its offset; a
// complete .swap replaces the segments in the offset range it covers and is
// renamed into place (and recovered, since its indexes may be half renamed);
// index files without a .log go. It also returns the names it listed, as
// they were before it removed anything.
func (p *Partition) scanDir() (bases []int64, recover map[int64]bool, listed listing, err error) {
	names, err := p.fsys.ReadDir(p.dir)
	if errors.Is(err, os.ErrNotExist) {
		// A new partition (or one whose directory is gone): its directory
		// is made here, where a look before the listing would cost every
		// Open of a partition that is there.
		if err := p.fsys.MkdirAll(p.dir, 0o755); err != nil {
			return nil, nil, nil, fmt.Errorf("partition: creating %s: %w", p.dir, err)
		}
		names, err = nil, nil
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("partition: listing %s: %w", p.name, err)
	}
	if !slices.IsSorted(names) {
		slices.Sort(names) // FS.ReadDir sorts; a listing is searched
	}
	listed = names
	var swaps map[int64]bool // the bases of the .log.swap files
	minCleaned := int64(math.MaxInt64)
	var indexes, cleaned, swapFiles []string
	changed := false
	var snaps []int64
	for _, name := range names {
		base, suffix, ok := segment.SplitFileName(name)
		if ok && suffix == snapshotSuffix+vfs.TempSuffix || !ok && checkpointTemp(name) {
			// A checkpoint or snapshot write that failed or crashed left
			// it; the file itself is whole, old or new. Best effort: a
			// file left behind is in nobody's way.
			if err := p.fsys.Remove(filepath.Join(p.dir, name)); err == nil {
				changed = true
			}
			continue
		}
		if !ok {
			continue // not a segment file (checkpoints, Kafka's other files)
		}
		switch {
		case suffix == segment.LogSuffix:
			bases = append(bases, base) // in order: the names are
		case suffix == segment.IndexSuffix || suffix == segment.TimeIndexSuffix || suffix == segment.TxnIndexSuffix:
			indexes = append(indexes, name)
		case strings.HasSuffix(suffix, segment.DeletedSuffix):
			if err := p.remove(name); err != nil {
				return nil, nil, nil, err
			}
			changed = true
		case strings.HasSuffix(suffix, segment.CleanedSuffix):
			cleaned = append(cleaned, name)
			minCleaned = min(minCleaned, base)
		case strings.HasSuffix(suffix, segment.SwapSuffix):
			swapFiles = append(swapFiles, name)
			if suffix == segment.LogSuffix+segment.SwapSuffix {
				if swaps == nil {
					swaps = map[int64]bool{}
				}
				swaps[base] = true
			}
		case suffix == snapshotSuffix:
			snaps = append(snaps, base)
		}
	}
	for _, name := range cleaned {
		if err := p.remove(name); err != nil {
			return nil, nil, nil, err
		}
		changed = true
	}
	for _, name := range swapFiles {
		if base, _, _ := segment.ParseFileName(name); base >= minCleaned {
			if err := p.remove(name); err != nil {
				return nil, nil, nil, err
			}
			delete(swaps, base)
			changed = true
		}
	}
	if len(swaps) > 0 {
		recover = map[int64]bool{}
		// Complete the swaps: the segments they cover go, they take their
		// place.
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for base := range swaps {
			next, err := segment.SwapNextOffset(p.fsys, p.dir, base)
			if err != nil {
				return nil, nil, nil, err
			}
			lo, hi = min(lo, base), max(hi, next)
		}
		// A compaction records where the segments it replaces end, which
		// its output may not reach.
		end, _, err := listed.loadCheckpoint(p, swapEndFile, -1, "completing the swap over what its output covers")
		if err != nil {
			return nil, nil, nil, err
		}
		hi = max(hi, end)
		kept := bases[:0]
		for _, base := range bases {
			if base >= lo && base < hi && !swaps[base] {
				if err := p.dropSegments([]int64{base}); err != nil {
					return nil, nil, nil, err
				}
				continue
			}
			kept = append(kept, base)
		}
		bases = kept
		for base := range swaps {
			if err := segment.RenameTemp(p.fsys, p.dir, base, segment.SwapSuffix, ""); err != nil {
				return nil, nil, nil, err
			}
			if !slices.Contains(bases, base) {
				bases = append(bases, base)
			}
			recover[base] = true
		}
		slices.Sort(bases)
		p.cfg.Logger.Warn("partition: completed an interrupted segment swap", "dir", p.dir, "from", lo, "to", hi)
		changed = true
	}
	if listed.has(swapEndFile) {
		if err := p.fsys.Remove(filepath.Join(p.dir, swapEndFile)); err == nil {
			changed = true
		}
	}
	for _, name := range indexes {
		base, _, _ := segment.ParseFileName(name)
		if _, ok := slices.BinarySearch(bases, base); !ok {
			err := p.remove(name)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, nil, nil, err
			}
			changed = true
		}
	}
	if changed {
		if err := p.fsys.SyncDir(p.dir); err != nil {
			return nil, nil, nil, fmt.Errorf("partition: syncing %s: %w", p.name, err)
		}
	}
	slices.Sort(snaps)
	p.mu.snaps = snaps
	return bases, recover, listed, nil
}

// listing is the names a partition's directory held when Open listed it,
// sorted. No other process writes the directory while the partition is
// open, so a name not in it is a file that is not there: Open reads, or
// removes, only what is.
type listing []string

// has reports whether name is listed.
func (l listing) has(name string) bool {
	_, ok := slices.BinarySearch(l, name)
	return ok
}

// loadCheckpoint is p.loadCheckpoint of a file that is listed; one that is
// not is missing.
func (l listing) loadCheckpoint(p *Partition, name string, missing int64, instead string) (int64, bool, error) {
	if !l.has(name) {
		return missing, false, nil
	}
	return p.loadCheckpoint(name, missing, instead)
}

// segmentFiles reports whether any file of the segment at base is listed,
// under its own name or with a suffix.
func (l listing) segmentFiles(base int64) bool {
	prefix := segment.FileName(base, "")
	i, _ := slices.BinarySearch(l, prefix) // the first name at or after it
	return i < len(l) && strings.HasPrefix(l[i], prefix)
}

func (p *Partition) remove(name string) error {
	if err := p.fsys.Remove(filepath.Join(p.dir, name)); err != nil {
		return fmt.Errorf("partition: removing leftover %s: %w", name, err)
	}
	return nil
}

// openSegments opens the segments with the given bases, recovering what
// needs it (see Open). A trusted segment's optional files are looked for in
// listed, the directory's listing (scanDir changed no file of a segment it
// left to be trusted).
func (p *Partition) openSegments(bases []int64, clean bool, rp int64, recoverBases map[int64]bool, listed listing) ([]*segRef, error) {
	// Recovery starts at the segment holding the recovery point.
	from := 0
	for i, base := range bases {
		if base <= rp {
			from = i
		}
	}
	if rp < 0 {
		from = 0
	}
	scfg := p.cfg.segmentConfig()
	var segs []*segRef
	var recovered []bool // per segment of segs: it was recovered, not trusted
	fail := func(err error) ([]*segRef, error) {
		releaseAll(segs)
		return nil, err
	}
	for i, base := range bases {
		last := i == len(bases)-1
		var s *segment.Segment
		var err error
		trusted := (clean || i < from) && !recoverBases[base] && !p.cfg.RecoverAll
		if trusted {
			s, err = segment.OpenListed(p.fsys, p.dir, base, scfg, last, listed.has)
			if err == nil && s.Damaged() != nil {
				p.cfg.Logger.Warn("partition: damage in a segment at open (a batch failing its CRC check, or a header stepped over); nothing is taken from it, reads of it fail",
					"dir", p.dir, "segment", segment.FileName(base, segment.LogSuffix), "err", s.Damaged())
			}
		}
		if !trusted || errors.Is(err, segment.ErrCorrupt) {
			// A segment that was trusted (closed cleanly, or synced below
			// the recovery point) and failed its check is damaged data,
			// not the unsynced tail of a crash: the segments after it are
			// durable, and stay. Without a recovery point nothing tells
			// the two apart, and the later segments, which pass their own
			// checks, stay too.
			durable := trusted || rp < 0
			trusted = false
			if err != nil {
				p.cfg.Logger.Warn("partition: segment failed its check, recovering it", "dir", p.dir, "base", base, "err", err)
			}
			var rec segment.Recovery
			s, rec, err = segment.OpenRecover(p.fsys, p.dir, base, scfg)
			if err == nil && rec.Truncated > 0 {
				p.cfg.Logger.Warn("partition: recovery cut a torn or damaged tail",
					"dir", p.dir, "segment", segment.FileName(base, segment.LogSuffix),
					"kept_bytes", rec.Bytes, "cut_bytes", rec.Truncated, "reason", rec.Reason)
			}
			if err == nil {
				err = s.Sync() // what recovery kept and rebuilt is now durable
			}
			if err == nil && len(rec.Recreated) > 0 {
				p.cfg.Logger.Warn("partition: index files were missing or unusable; rebuilt them from the log",
					"dir", p.dir, "files", rec.Recreated)
				err = p.fsys.SyncDir(p.dir) // and so are their names
			}
			if err == nil && rec.Truncated > 0 && !last && !durable {
				// What followed the cut bytes of an unsynced segment
				// cannot stay (as Kafka's recovery has it): every later
				// segment goes.
				segs = append(segs, newRef(s))
				if err := p.dropSegments(bases[i+1:]); err != nil {
					return fail(err)
				}
				return segs, nil
			}
		}
		if err == nil && !last && !s.Sealed() {
			// A recovered segment in the middle: seal it as a roll would.
			if err = s.Seal(); err == nil {
				err = s.Sync()
			}
		}
		if err != nil {
			return fail(fmt.Errorf("partition: opening segment %d of %s: %w", base, p.name, err))
		}
		if n := len(segs); n > 0 && segs[n-1].seg.NextOffset() != s.Base() {
			prevNext := segs[n-1].seg.NextOffset()
			if prevNext > s.Base() {
				_ = s.Close()
				return fail(fmt.Errorf("partition: segment %d of %s overlaps the previous one, which ends at %d: %w",
					base, p.name, prevNext, segment.ErrCorrupt))
			}
			// Offsets only have to rise: compaction leaves gaps between
			// segments, and so does a log Kafka wrote. After a crash it
			// may also mean the previous segment lost its last batches
			// whole (its tail was never fsynced): as Kafka does, the later
			// segments, which hold valid records, stay.
			if recovered[n-1] {
				p.cfg.Logger.Info("partition: a gap in the offsets between a recovered segment and the next",
					"dir", p.dir, "from", prevNext, "to", base)
			}
		}
		segs = append(segs, newRef(s))
		recovered = append(recovered, !trusted)
	}
	if n := len(segs); n > 0 && segs[n-1].seg.Sealed() {
		// The last segment was opened read-only (it was recovered from an
		// earlier position): reopen it writable.
		r := segs[n-1]
		_ = r.seg.Close()
		s, err := segment.Open(p.fsys, p.dir, r.seg.Base(), scfg, true)
		if err != nil {
			return fail(err)
		}
		segs[n-1] = newRef(s)
	}
	return segs, nil
}

// dropSegments deletes the files of the segments with the given bases, which
// are not open.
func (p *Partition) dropSegments(bases []int64) error {
	for _, base := range bases {
		if err := segment.RemoveFiles(p.fsys, p.dir, base, ""); err != nil {
			return fmt.Errorf("partition: %w", err)
		}
		p.cfg.Logger.Warn("partition: deleted a segment after an earlier one lost bytes", "dir", p.dir, "base", base)
	}
	return p.fsys.SyncDir(p.dir)
}
