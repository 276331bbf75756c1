package partition

import (
	"errors"
	"fmt"

	"github.com/stratalog/strata/log"
)

// ErrWrongOffset means a conditional append found the partition's end
// offset (AppendIfEnd), or the offset of the last record with a key
// (AppendIfLast), other than the one expected, and wrote nothing. The
// error is a *WrongOffsetError, which carries the actual offset.
var ErrWrongOffset = errors.New("partition: wrong end offset")

// WrongOffsetError is the error a conditional append returns when the
// offset it checks is not the one the caller expected: the partition's end
// offset (AppendIfEnd), or the offset of the last record with Key
// (AppendIfLast). Nothing was written. It matches ErrWrongOffset.
type WrongOffsetError struct {
	// Key is the key whose last offset was checked, nil for a check of
	// the end offset.
	Key []byte
	// Expected is the offset the caller expected.
	Expected int64
	// Actual is the offset found when the append was refused: the
	// partition's end offset (the offset the next append gets), or the
	// offset of the key's last record (NoOffset if it has none).
	Actual int64
}

// Error says which offset was expected and which was found.
func (e *WrongOffsetError) Error() string {
	if e.Key != nil {
		return fmt.Sprintf("partition: last offset of key %q is %d, not the expected %d", e.Key, e.Actual, e.Expected)
	}
	return fmt.Sprintf("partition: end offset is %d, not the expected %d", e.Actual, e.Expected)
}

// Unwrap returns ErrWrongOffset, so that errors.Is matches it.
func (e *WrongOffsetError) Unwrap() error { return ErrWrongOffset }

// anyEnd is the expected end offset of an append that does not check it.
const anyEnd = -1

// condition is what a conditional append checks under mu before it
// writes: the end offset (unless anyEnd), and the last offset of a key
// (unless key is nil). decided marks a marker of WriteDecidedMarker.
type condition struct {
	end     int64
	key     []byte
	last    int64
	decided bool
}

// checkMuLocked checks cond against the partition, whose end offset is
// end. The caller holds mu.
func (p *Partition) checkMuLocked(end int64, cond condition) error {
	if cond.end != anyEnd && end != cond.end {
		return fmt.Errorf("partition: append to %s: %w", p.name, &WrongOffsetError{Expected: cond.end, Actual: end})
	}
	if cond.key == nil {
		return nil
	}
	if p.mu.keys == nil || p.mu.keys.building {
		return errKeysDropped
	}
	actual, err := p.lastOffsetMuLocked(cond.key)
	if err != nil {
		return fmt.Errorf("partition: append to %s: %w", p.name, err)
	}
	if err := p.pendingMuLocked(cond.key, actual); err != nil {
		return err
	}
	if actual != cond.last {
		return fmt.Errorf("partition: append to %s: %w", p.name, &WrongOffsetError{Key: cond.key, Expected: cond.last, Actual: actual})
	}
	return nil
}

// AppendIfEnd appends records as one batch, as Append does, only if the
// partition's end offset (EndOffset: the offset the batch's first record
// gets) is end; it returns that offset. Otherwise it writes nothing and
// returns a *WrongOffsetError (matching ErrWrongOffset) that carries the
// actual end offset, so that the caller can read what it missed and try
// again. The check and the append are one step under the lock that
// assigns offsets: of concurrent AppendIfEnd calls with the same end,
// exactly one succeeds.
//
// The end offset compared is the log end offset, not the high watermark.
// They are the same except under SyncAlways, where an append's records are
// given their offsets before its fsync and become visible to readers after
// it: while another append's fsync runs, the end offset is past the high
// watermark, and a caller that read up to the high watermark gets
// ErrWrongOffset, with an Actual that its readers reach once that fsync is
// done (or never, if the fsync fails and closes the partition).
//
// Bad input is refused first, whatever the end offset: a negative end is
// ErrOutOfRange, and the rest is as for Append. A closed partition is
// ErrClosed.
func (p *Partition) AppendIfEnd(records []log.Record, end int64) (int64, error) {
	if end < 0 {
		return 0, fmt.Errorf("partition: append to %s: expected end offset %d is negative: %w", p.name, end, ErrOutOfRange)
	}
	return p.appendRecords(records, p.cfg.Compression, p.cfg.CompressionLevel, condition{end: end})
}
