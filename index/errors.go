package index

import (
	"errors"
	"fmt"
)

// Errors returned by the indexes. Every error an index returns for one of
// these conditions matches it with errors.Is and says, in its message, which
// offset, timestamp or entry was at fault.
var (
	// ErrFull is returned by an append to an index that has no free slot left
	// (for a time index without skipFullCheck: no free slot but the reserved
	// last one). The segment rolls before this happens.
	ErrFull = errors.New("index: index is full")
	// ErrOutOfOrder is returned by an append that would break the order of
	// the entries: an offset (or, in an offset index, a position) not above
	// the last entry's, or, in a time index, an offset below the last entry's;
	// also by an offset index's first append with a negative position.
	ErrOutOfOrder = errors.New("index: entry out of order")
	// ErrOffsetOverflow is returned by an append whose offset is below the
	// segment's base offset or more than math.MaxInt32 above it, so that the
	// relative offset does not fit the entry's int32. The segment rolls
	// before appending such an offset (see Offset.CanAppendOffset).
	ErrOffsetOverflow = errors.New("index: offset does not fit the index")
	// ErrCorrupt is matched by every *CorruptError: a file larger than 2 GiB,
	// a read-only file whose size is not a multiple of the entry size, or
	// (from Check) entries out of order or below the base offset.
	ErrCorrupt = errors.New("index: corrupt index")
	// ErrSealed is returned by an append to an index that was opened
	// read-only, trimmed by Trim, or closed.
	ErrSealed = errors.New("index: index is sealed")
)

// CorruptError reports a corrupt index file: where it is and what is wrong.
// It matches ErrCorrupt with errors.Is.
type CorruptError struct {
	// Path is the index file's path.
	Path string
	// Entry is the number (from 0) of the first bad entry, or -1 when the
	// fault is the file's size.
	Entry int
	// Pos is the byte position of the fault in the file: the bad entry's
	// start, or the file's size.
	Pos int64
	// Reason says what is wrong, in words.
	Reason string
}

// Error returns the description of the corruption, starting "index: ".
func (e *CorruptError) Error() string {
	if e.Entry < 0 {
		return fmt.Sprintf("index: corrupt file %s at byte %d: %s", e.Path, e.Pos, e.Reason)
	}
	return fmt.Sprintf("index: corrupt file %s at entry %d (byte %d): %s", e.Path, e.Entry, e.Pos, e.Reason)
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// indexError is an error of one of the sentinel kinds with a detailed
// message; it matches its kind with errors.Is.
type indexError struct {
	kind error
	msg  string
}

func (e *indexError) Error() string { return "index: " + e.msg }

func (e *indexError) Unwrap() error { return e.kind }

// errorf returns an error of the given kind with the formatted message, to
// which "index: " is prefixed.
func errorf(kind error, format string, args ...any) error {
	return &indexError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
