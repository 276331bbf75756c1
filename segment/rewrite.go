package segment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratalog/strata/internal/vfs"
)

// Rewrite makes a new writable segment with the same base offset that holds
// the batches of s whose last offset is below offset, followed by extra
// (whole batches that follow them, or nothing), and puts it in s's place on
// disk. Unlike Truncate it never shrinks a file under a reader: the new
// segment is written to .swap files, synced and renamed over the old names,
// so s keeps its own (now unlinked) files and readers holding s finish
// undisturbed. Close s when they let go; do not Delete it (its names now
// belong to the new segment).
//
// A crash before the renames leaves .swap files (the caller removes them at
// Open); a crash between the renames leaves a segment whose index does not
// match its log: the caller must recover it (put the recovery point at or
// below s's base before calling Rewrite).
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
	for _, kind := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
		err := s.fsys.Remove(filepath.Join(s.dir, FileName(s.base, kind)+SwapSuffix))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("segment: removing a stale swap file: %w", err)
		}
	}
	n, err := openNamed(s.fsys, s.dir, s.base, SwapSuffix, s.cfg, true, true)
	if err != nil {
		return nil, err
	}
	if cut > 0 {
		err = n.Append(s.data[:cut])
	}
	if err == nil && len(extra) > 0 {
		err = n.Append(extra)
	}
	if err == nil {
		err = n.Sync()
	}
	if err == nil {
		err = n.Close() // trims and seals; reopened below under the final names
	}
	if err != nil {
		n.closeFiles()
		return nil, fmt.Errorf("segment: rewriting %s: %w", s.path, err)
	}
	if err := renameSwap(s.fsys, s.dir, s.base); err != nil {
		return nil, err
	}
	return Open(s.fsys, s.dir, s.base, s.cfg, true)
}

// renameSwap renames a segment's .swap files to their final names, the log
// last, and syncs the directory.
func renameSwap(fsys vfs.FS, dir string, base int64) error {
	for _, kind := range []string{IndexSuffix, TimeIndexSuffix, LogSuffix} {
		final := filepath.Join(dir, FileName(base, kind))
		if err := fsys.Rename(final+SwapSuffix, final); err != nil {
			return fmt.Errorf("segment: renaming %s into place: %w", final+SwapSuffix, err)
		}
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("segment: syncing %s: %w", dir, err)
	}
	return nil
}
