package partition

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stratalog/strata/internal/vfs"
)

// startOffsetFile holds the partition's start offset once DeleteRecords has
// moved it past the first segment's base, as Kafka's
// log-start-offset-checkpoint does for a whole log directory.
const startOffsetFile = "log-start-offset"

// readStartOffset reads the start-offset checkpoint, 0 if there is none.
func readStartOffset(fsys vfs.FS, dir string) (int64, error) {
	path := filepath.Join(dir, startOffsetFile)
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("partition: opening %s: %w", path, err)
	}
	defer f.Close()
	var buf [32]byte
	n, _ := f.ReadAt(buf[:], 0)
	off, err := strconv.ParseInt(strings.TrimSpace(string(buf[:n])), 10, 64)
	if err != nil || off < 0 {
		return 0, fmt.Errorf("partition: %s holds %q, not an offset: %w", path, buf[:n], ErrCorruptCheckpoint)
	}
	return off, nil
}

// writeStartOffset replaces the start-offset checkpoint atomically: a
// temporary file, fsync, rename, fsync of the directory.
func writeStartOffset(fsys vfs.FS, dir string, off int64) error {
	path := filepath.Join(dir, startOffsetFile)
	tmp := path + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("partition: writing %s: %w", tmp, err)
	}
	_, err = f.WriteAt(strconv.AppendInt(nil, off, 10), 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("partition: writing %s: %w", path, err)
	}
	return nil
}
