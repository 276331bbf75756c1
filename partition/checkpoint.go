package partition

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/stratalog/strata/vfs"
)

// Checkpoint files in a partition's directory, as Kafka keeps them for a
// whole log directory (log-start-offset-checkpoint and
// recovery-point-offset-checkpoint).
const (
	// startOffsetFile holds the start offset once DeleteRecords moved it.
	startOffsetFile = "log-start-offset"
	// recoveryPointFile holds an offset below which every segment is on
	// stable storage, sealed: recovery after a crash starts at the segment
	// holding it. It is rewritten only when that segment changes, so a
	// partition that never had a second segment has none.
	recoveryPointFile = "recovery-point"
)

// checkpointNames are the checkpoint files a partition writes.
var checkpointNames = []string{startOffsetFile, recoveryPointFile, cleanerOffsetFile, swapEndFile}

// checkpointTemp reports whether name is the temporary file of one of the
// partition's checkpoints, which a write that failed or crashed leaves.
func checkpointTemp(name string) bool {
	base, ok := strings.CutSuffix(name, vfs.TempSuffix)
	return ok && slices.Contains(checkpointNames, base)
}

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

// loadCheckpoint reads a checkpoint as readCheckpoint does: a file that
// does not hold an offset is distrusted (see distrustCheckpoint) and taken
// for missing, which the caller chose to be the conservative value;
// instead says what that means. It reports whether the file was
// distrusted. A file that cannot be read (an I/O error) is an error, not a
// reason to distrust it: removing a start offset the disk failed to give
// once would bring deleted records back for good.
func (p *Partition) loadCheckpoint(name string, missing int64, instead string) (int64, bool, error) {
	off, err := readCheckpoint(p.fsys, p.dir, name, missing)
	if errors.Is(err, ErrCorruptCheckpoint) {
		p.distrustCheckpoint(name, instead, "err", err)
		return missing, true, nil
	}
	return off, false, err
}

// distrustCheckpoint logs that the checkpoint file name cannot be trusted,
// with what is done instead and why (args), and removes it so that it is not
// read again. The removal is best effort: a file left behind is distrusted
// again at the next read.
func (p *Partition) distrustCheckpoint(name, instead string, args ...any) {
	path := filepath.Join(p.dir, name)
	p.cfg.Logger.Warn("partition: ignoring a checkpoint that is unreadable or contradicts the log",
		append([]any{"file", path, "instead", instead}, args...)...)
	if err := p.fsys.Remove(path); err == nil {
		_ = p.fsys.SyncDir(p.dir)
	}
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
	// stored is what the file holds, as read at Open or last written: -1
	// when there is no file.
	stored int64
}

// set makes offset the recovery point to write.
func (c *recoveryCheckpoint) set(offset int64) { c.due, c.offset = true, offset }

// checkpointSyncMuLocked writes the recovery point that is due, if any. A
// failure leaves it due, to be written by the next flush (after a Sync, a
// roll, or in Close): the file then holds an earlier recovery point, which
// only makes recovery after a crash start earlier, so it closes nothing.
// It is logged, once until a write succeeds. The caller holds syncMu (or
// is Open, before the partition is shared).
func (p *Partition) checkpointSyncMuLocked() {
	c := &p.checkpoint
	if !c.due {
		return
	}
	if segs := p.state.Load().segs; recoveryStart(segs, c.offset) == recoveryStart(segs, c.stored) {
		// Recovery would start at the same segment with either: the
		// file stays as it is, a write saved (a partition of one
		// segment never writes one).
		c.due = false
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
	c.due, c.failing, c.stored = false, false, c.offset
}

// recoveryStart returns the index in segs of the segment at which recovery
// after a crash starts with recovery point rp, as Open finds it: the last
// whose base offset is at most rp, or the first if there is none (rp −1,
// no checkpoint, included). Since a partition's segment bounds only ever
// disappear (retention, compaction) or are added after the end, two
// recovery points that start at the same segment now do so later too.
func recoveryStart(segs []*segRef, rp int64) int {
	return max(0, sort.Search(len(segs), func(i int) bool { return segs[i].seg.Base() > rp })-1)
}
