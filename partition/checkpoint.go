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

// Checkpoint files in a partition's directory, as Kafka keeps them for a
// whole log directory (log-start-offset-checkpoint and
// recovery-point-offset-checkpoint).
const (
	// startOffsetFile holds the start offset once DeleteRecords moved it.
	startOffsetFile = "log-start-offset"
	// recoveryPointFile holds the offset below which every segment is on
	// stable storage, sealed: recovery after a crash starts at the segment
	// holding it.
	recoveryPointFile = "recovery-point"
)

// readCheckpoint reads a checkpoint file, or returns missing if there is
// none.
func readCheckpoint(fsys vfs.FS, dir, name string, missing int64) (int64, error) {
	path := filepath.Join(dir, name)
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return missing, nil
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

// writeCheckpoint replaces a checkpoint file atomically: a temporary file,
// fsync, rename, fsync of the directory.
func writeCheckpoint(fsys vfs.FS, dir, name string, off int64) error {
	path := filepath.Join(dir, name)
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
