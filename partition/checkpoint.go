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
	data, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, os.ErrNotExist) {
		return missing, nil
	}
	if err != nil {
		return 0, fmt.Errorf("partition: reading %s: %w", path, err)
	}
	off, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || off < 0 {
		return 0, fmt.Errorf("partition: %s holds %.32q, not an offset: %w", path, data, ErrCorruptCheckpoint)
	}
	return off, nil
}

// writeCheckpoint replaces a checkpoint file atomically: a temporary file,
// fsync, rename, fsync of the directory.
func writeCheckpoint(fsys vfs.FS, dir, name string, off int64) error {
	path := filepath.Join(dir, name)
	if err := vfs.WriteFileAtomic(fsys, path, strconv.AppendInt(nil, off, 10)); err != nil {
		return fmt.Errorf("partition: writing %s: %w", path, err)
	}
	return nil
}

// recoveryCheckpoint is the recovery point that the partition has yet to
// write to its checkpoint file, because the last attempt failed (on a full
// disk, say) or none was made yet.
type recoveryCheckpoint struct {
	due     bool  // offset is to be written
	offset  int64 // the recovery point to write
	failing bool  // the last attempt failed: logged, and not again until one succeeds
}

// set makes offset the recovery point to write.
func (c *recoveryCheckpoint) set(offset int64) { c.due, c.offset = true, offset }

// checkpointLocked writes the recovery point that is due, if any. A failure
// leaves it due, to be written by the next flush (after a Sync, a roll, or
// in Close): the file then holds an earlier recovery point, which only
// makes recovery after a crash start earlier, so it closes nothing. It is
// logged, once until a write succeeds. The caller holds syncMu.
func (p *Partition) checkpointLocked() {
	c := &p.checkpoint
	if !c.due {
		return
	}
	if err := writeCheckpoint(p.fsys, p.dir, recoveryPointFile, c.offset); err != nil {
		if !c.failing {
			p.cfg.Logger.Warn("partition: cannot checkpoint the recovery point; the next flush tries again, and until then recovery after a crash starts earlier",
				"dir", p.dir, "offset", c.offset, "err", err)
		}
		c.failing = true
		return
	}
	if c.failing {
		p.cfg.Logger.Info("partition: recovery point checkpointed again", "dir", p.dir, "offset", c.offset)
	}
	c.due, c.failing = false, false
}
