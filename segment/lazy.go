package segment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratalog/strata/index"
	"github.com/stratalog/strata/vfs"
)

// A segment whose .log holds at most IndexIntervalBytes has no index files
// on disk: no offset-index entry is due before a batch that starts past
// that many bytes, and its max timestamp is what Open's scan of the batches
// after the last offset-index entry finds anyway. Its indexes are created
// when an append takes the log past IndexIntervalBytes, as Kafka's
// LazyIndex (storage/src/main/java/org/apache/kafka/storage/internals/log/LazyIndex.java)
// creates an index's file when it is first used. Such a segment costs two
// file creations, two 10 MiB truncations and mappings, and their unmapping
// less; it is what a test store's topics mostly are. Kafka's LogLoader
// rebuilds the missing index files of such a segment from its .log.
//
// Segments under a temporary name (compaction's .cleaned, the .swap files)
// always have their index files: a rename of the set must not leave an
// older segment's index under the final name.

// lazyLimit returns the size of .log up to which the segment keeps no index
// files.
func (s *Segment) lazyLimit() int64 { return int64(s.cfg.IndexIntervalBytes) }

// openIndexes opens the segment's two index files, or defers those that are
// missing (writable or not) or, with create, not to be made yet; a segment
// under a temporary name opens (and, writable, creates) both.
func (s *Segment) openIndexes(create bool) error {
	var err error
	opath, tpath := s.filePath(IndexSuffix), s.filePath(TimeIndexSuffix)
	if s.deferIndex(opath, create) {
		s.offsets, err = index.DeferOffset(s.fsys, opath, s.base, s.cfg.MaxIndexBytes, s.writable)
	} else {
		s.offsets, err = index.OpenOffset(s.fsys, opath, s.base, s.cfg.MaxIndexBytes, s.writable)
	}
	if err != nil {
		return indexError(err)
	}
	if s.deferIndex(tpath, create) {
		s.times, err = index.DeferTime(s.fsys, tpath, s.base, s.cfg.MaxIndexBytes, s.writable)
	} else {
		s.times, err = index.OpenTime(s.fsys, tpath, s.base, s.cfg.MaxIndexBytes, s.writable)
	}
	return indexError(err)
}

// deferIndex reports whether the index file at path is left for later:
// the segment has its final name, and the file is new (create) or missing.
func (s *Segment) deferIndex(path string, create bool) bool {
	if s.tmp != "" {
		return false
	}
	if create {
		return true
	}
	return !fileThere(s.fsys, path, s.cfg.listed)
}

// fileThere reports whether the file at path is there: by listed, when it is
// set (see OpenListed), or else by a look at the file system, which takes
// a failure other than a missing file for a file that is there (its open
// then meets the failure).
func fileThere(fsys vfs.FS, path string, listed func(name string) bool) bool {
	if listed != nil {
		return listed(filepath.Base(path))
	}
	_, err := fsys.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// needIndexes creates the index files of a segment whose .log is to reach
// end bytes, when that is past lazyLimit and they are not there yet, and
// syncs the directory after creating them. A failure to sync is ErrSync,
// and the next call syncs again.
func (s *Segment) needIndexes(end int64) error {
	if end <= s.lazyLimit() && !s.indexDirDirty {
		return nil
	}
	created := false
	for _, x := range []interface {
		OnDisk() bool
		Create() error
	}{s.offsets, s.times} {
		if x.OnDisk() {
			continue
		}
		if err := x.Create(); err != nil {
			return fmt.Errorf("segment: creating the indexes of %s: %w", s.path, err)
		}
		created = true
	}
	if created {
		s.indexDirDirty = true
	}
	if s.indexDirDirty {
		if err := s.fsys.SyncDir(s.dir); err != nil {
			return fmt.Errorf("segment: syncing directory %s: %w: %w", s.dir, ErrSync, err)
		}
		s.indexDirDirty = false
	}
	return nil
}

// absentIndexes returns the paths of the index files of the segment at base
// that are not there (by listed, if it is set: see fileThere).
func absentIndexes(fsys vfs.FS, dir string, base int64, listed func(name string) bool) []string {
	var absent []string
	for _, kind := range []string{IndexSuffix, TimeIndexSuffix} {
		if path := filePathIn(dir, base, kind, ""); !fileThere(fsys, path, listed) {
			absent = append(absent, path)
		}
	}
	return absent
}

// onDisk returns those of paths, index files of s, that s has on disk.
func (s *Segment) onDisk(paths []string) []string {
	var kept []string
	for _, p := range paths {
		if p == s.offsets.Path() && s.offsets.OnDisk() || p == s.times.Path() && s.times.OnDisk() {
			kept = append(kept, p)
		}
	}
	return kept
}
