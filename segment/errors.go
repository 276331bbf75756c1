package segment

import (
	"errors"
	"fmt"

	"github.com/stratalog/strata/log"
)

// Errors returned by segments. Match them with errors.Is.
var (
	// ErrCorrupt means bytes in the segment are present but wrong: a bad CRC,
	// a bad magic byte, a length that does not fit, or offsets that do not
	// rise, in the log or in an index. The error names the file and the
	// byte position. It also matches log.ErrCorrupt, the one sentinel every
	// layer's corruption matches.
	ErrCorrupt = log.Corruption("segment: corrupt data")
	// ErrInvalidBatch means the batches given to Append do not follow the
	// segment: their offsets are not the next ones, or the bytes are not
	// whole batches.
	ErrInvalidBatch = errors.New("segment: invalid batch")
	// ErrFull means the append would take the .log file past MaxBytes, needs
	// more index entries than the segment's indexes have left, or has
	// offsets too far from the base offset: roll to a new segment and
	// append there.
	ErrFull = errors.New("segment: full")
	// ErrSealed means the segment no longer takes appends.
	ErrSealed = errors.New("segment: sealed")
	// ErrClosed means the segment was closed.
	ErrClosed = errors.New("segment: closed")
	// ErrSync means an fsync failed: of a segment's files (Sync, SyncLog)
	// or of the directory after creating them (Create). What it was to
	// make durable may be lost, even if a later fsync succeeds.
	ErrSync = errors.New("segment: fsync failed")
	// ErrBadName means a file name is not a segment file name.
	ErrBadName = errors.New("segment: bad file name")
)

// corruptAt wraps ErrCorrupt with the file and the byte position.
func corruptAt(path string, pos int64, reason error) error {
	return fmt.Errorf("%w: in file %s at position %d: %w", ErrCorrupt, path, pos, reason)
}
