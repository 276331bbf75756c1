package log

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error this package returns matches one of them with
// [errors.Is]; most wrap one with the reason, as in
// "log: record 3 at byte 120: key length -5: corrupt batch".
var (
	// ErrIncomplete reports that the bytes end before the batch does: a
	// torn tail, or a buffer that was cut short. Reading more bytes may help.
	ErrIncomplete = errors.New("log: incomplete batch")
	// ErrCorrupt reports bytes that can never be a valid batch: a bad magic,
	// a CRC mismatch, lengths or counts that disagree, malformed varints.
	ErrCorrupt = errors.New("log: corrupt batch")
	// ErrUnsupportedCompression reports a batch this package cannot
	// decompress though it may pass its CRC check: a codec Kafka does not
	// have (5 to 7), an LZ4 frame of dependent blocks, or a compressed batch
	// given to a reader of uncompressed ones (NewRecordIter; use a Decoder).
	ErrUnsupportedCompression = errors.New("log: unsupported compression")
	// ErrUnsupportedFormat reports a message of the formats before
	// RecordBatch v2 (magic 0 or 1): valid Kafka data, kept and checked,
	// whose records this package does not read.
	ErrUnsupportedFormat = errors.New("log: unsupported format")
	// ErrTooLarge reports a compressed batch whose records decompress to
	// more than the reader's limit (Decoder.Limit): it may be valid, but
	// reading it would take more memory than allowed.
	ErrTooLarge = errors.New("log: decompressed batch too large")
	// ErrEmptyBatch is returned by [EncodeBatch] when it is given no records.
	ErrEmptyBatch = errors.New("log: empty batch")
	// ErrInvalidBatch reports encoder input that would not make a valid
	// batch: offsets out of order or out of range, a field too large.
	ErrInvalidBatch = errors.New("log: invalid batch")
)

// formatError is a sentinel with its reason. Error reads
// "log: <reason>: <sentinel without its package prefix>".
type formatError struct {
	kind   error
	reason string
}

func (e *formatError) Error() string {
	kind := e.kind.Error()
	if i := strings.Index(kind, ": "); i >= 0 && !strings.ContainsAny(kind[:i], " \"") {
		kind = kind[i+2:]
	}
	return "log: " + e.reason + ": " + kind
}

func (e *formatError) Unwrap() error { return e.kind }

func errorf(kind error, format string, args ...any) error {
	return &formatError{kind: kind, reason: fmt.Sprintf(format, args...)}
}

// Corruption returns a new error with message msg that matches ErrCorrupt
// with errors.Is: a layer's own sentinel for damaged data (a segment's, a
// checkpoint's), or a message about damage that needs no "corrupt batch"
// suffix, so that every layer's corruption matches the one sentinel.
func Corruption(msg string) error { return &corruption{msg: msg} }

// corruption is the error Corruption returns.
type corruption struct{ msg string }

func (e *corruption) Error() string { return e.msg }

// Is reports whether target is ErrCorrupt.
func (e *corruption) Is(target error) bool { return target == ErrCorrupt }
