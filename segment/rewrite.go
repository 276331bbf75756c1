package segment

import (
	"errors"
	"fmt"
	"os"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// Rewrite makes a new writable segment with the same base offset that holds
// the batches of s whose last offset is below offset, followed by extra
// (whole batches that follow them, or nothing), and puts it in s's place on
// disk. Unlike a truncation in place it never shrinks a file under a reader: s keeps its
// own (then unlinked) files, and readers holding s finish undisturbed. Close
// s when they let go; do not Delete it (its names now belong to the new
// segment).
//
// The files go through the crash-safe protocol of Kafka's
// LocalLog.replaceSegments: written as .cleaned and synced, renamed to .swap
// once complete, then renamed over the old names. At Open, the partition
// deletes .cleaned files (the rewrite never happened) and completes .swap
// files (SwapNextOffset helps it).
func (s *Segment) Rewrite(offset int64, extra []byte) (*Segment, error) {
	if s.closed {
		return nil, ErrClosed
	}
	end := s.size.Load()
	cut, _, err := s.locate(max(offset, s.base), end)
	if err != nil {
		return nil, err
	}
	if cut < 0 {
		cut = end
	}
	// The new segment trusts what it is given as if it had written it (its
	// CRCs are not checked again, its max timestamp goes into the time
	// index), so the kept batches are checked first.
	if err := s.checkBatches(cut); err != nil {
		return nil, fmt.Errorf("segment: rewriting %s: %w", s.path, err)
	}
	n, err := CreateTemp(s.fsys, s.dir, s.base, CleanedSuffix, s.cfg)
	if err != nil {
		return nil, err
	}
	if cut > 0 {
		err = n.Append(s.data[:cut])
	}
	if err == nil && len(extra) > 0 {
		err = n.Append(extra)
	}
	for _, t := range s.AbortedTxns() {
		if err != nil || t.LastOffset >= n.NextOffset() {
			break
		}
		err = n.AppendAbortedTxn(t)
	}
	if err == nil {
		err = n.Seal()
	}
	if err == nil {
		err = n.Sync()
	}
	if err != nil {
		_ = n.Delete() // best effort: Open removes .cleaned leftovers too
		return nil, fmt.Errorf("segment: rewriting %s: %w", s.path, err)
	}
	_ = n.Close() // sealed and synced: nothing left to fail
	if err := RenameTemp(s.fsys, s.dir, s.base, CleanedSuffix, SwapSuffix); err != nil {
		return nil, err
	}
	if err := RenameTemp(s.fsys, s.dir, s.base, SwapSuffix, ""); err != nil {
		return nil, err
	}
	return Open(s.fsys, s.dir, s.base, s.cfg, true)
}

// checkBatches checks the CRC of every batch in the first end bytes of the
// file that is not known good yet. The verified prefix ends at a batch
// boundary, so the scan starts there.
func (s *Segment) checkBatches(end int64) error {
	for pos := min(s.verified.Load(), end); pos < end; {
		h, err := s.headerAt(pos, end)
		if err == nil {
			err = s.check(pos, h.Size())
		}
		if err != nil {
			return err
		}
		pos += int64(h.Size())
	}
	return nil
}

// CreateTemp creates a new, empty, writable segment whose file names carry a
// temporary suffix after their usual one (CleanedSuffix for compaction or
// rewrite output in progress), replacing stale files of those names. Seal,
// Sync and close it, then rename it into place with RenameTemp.
func CreateTemp(fsys vfs.FS, dir string, base int64, suffix string, cfg Config) (*Segment, error) {
	if err := RemoveFiles(fsys, dir, base, suffix); err != nil {
		return nil, err
	}
	return openNamed(fsys, dir, base, suffix, cfg, true, true)
}

// RemoveFiles removes the four files of the segment at base in dir whose
// names end in suffix after their usual one ("" for the final names);
// files that are not there are no error. The directory is not synced.
func RemoveFiles(fsys vfs.FS, dir string, base int64, suffix string) error {
	for _, kind := range fileKinds {
		name := filePathIn(dir, base, kind, suffix)
		if err := fsys.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("segment: removing %s: %w", name, err)
		}
	}
	return nil
}

// RenameTemp renames a segment's files from the temporary suffix from to to
// ("" for the final names, replacing what has them), the log last, and
// syncs the directory. A file already renamed (a crash midway) is skipped.
func RenameTemp(fsys vfs.FS, dir string, base int64, from, to string) error {
	for _, kind := range []string{IndexSuffix, TimeIndexSuffix, TxnIndexSuffix, LogSuffix} {
		name := filePathIn(dir, base, kind, "")
		err := fsys.Rename(name+from, name+to)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("segment: renaming %s: %w", name+from, err)
		}
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("segment: syncing %s: %w", dir, err)
	}
	return nil
}

// SwapNextOffset returns the offset after the last valid batch of the .swap
// log of the segment at base, to find which segments a swap replaces. It
// reads the log alone (whole batches, CRC-checked), through a mapping of
// it, never the indexes.
func SwapNextOffset(fsys vfs.FS, dir string, base int64) (int64, error) {
	path := filePathIn(dir, base, LogSuffix, SwapSuffix)
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("segment: opening %s: %w", path, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, err
	}
	data, err := f.Map(int(min(size, MaxBytesLimit)))
	if err != nil {
		return 0, fmt.Errorf("segment: mapping %s: %w", path, err)
	}
	defer func() { _ = f.Unmap(data) }()
	next := base
	for it := log.NewBatchIter(data); it.Next(); {
		if _, err := log.CheckBatch(it.Batch()); err != nil {
			break
		}
		next = it.Header().NextOffset()
	}
	return next, nil
}
