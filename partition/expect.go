package partition

import (
	"errors"
	"fmt"

	"github.com/stratalog/strata/log"
)

// ErrWrongOffset means a conditional append (AppendIfEnd) found the
// partition's end offset other than the one expected, and wrote nothing.
// The error is a *WrongOffsetError, which carries the actual end offset.
var ErrWrongOffset = errors.New("partition: wrong end offset")

// WrongOffsetError is the error AppendIfEnd returns when the partition's
// end offset is not the one the caller expected. Nothing was written.
// It matches ErrWrongOffset.
type WrongOffsetError struct {
	// Expected is the end offset the caller expected.
	Expected int64
	// Actual is the partition's end offset when the append was refused:
	// the offset the next append gets, unless another append or a
	// truncation comes first.
	Actual int64
}

// Error says which end offset was expected and which was found.
func (e *WrongOffsetError) Error() string {
	return fmt.Sprintf("partition: end offset is %d, not the expected %d", e.Actual, e.Expected)
}

// Unwrap returns ErrWrongOffset, so that errors.Is matches it.
func (e *WrongOffsetError) Unwrap() error { return ErrWrongOffset }

// anyEnd is the expected end offset of an unconditional append.
const anyEnd = -1

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
	bufp := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(bufp)
	b, err := p.EncodeWith((*bufp)[:0], records, p.cfg.Compression, p.cfg.CompressionLevel)
	*bufp = b.bytes[:0]
	if err != nil {
		return 0, err
	}
	return p.appendEncoded(b.bytes, b.header, end)
}
