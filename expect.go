package strata

import (
	"context"

	"github.com/stratalog/strata/partition"
)

// ErrWrongOffset means AppendIfEnd found the partition's end offset other
// than the one expected, and wrote nothing. errors.As gives the
// *WrongOffsetError, which carries the actual end offset.
var ErrWrongOffset = partition.ErrWrongOffset

// WrongOffsetError is the error AppendIfEnd returns when the partition's
// end offset is not the one expected: Expected and Actual are the offsets.
// Nothing was written. It matches ErrWrongOffset.
type WrongOffsetError = partition.WrongOffsetError

// AppendIfEnd appends records to one partition of a topic, as one batch,
// only if the partition's end offset is still end: the offset the first
// record would get, and the one ListOffsets(Latest) and Read report as the
// end. It returns that offset; the other records follow densely. This is
// optimistic concurrency control for a writer that read the partition up
// to end and decided what to append from what it read: if anything was
// appended since, nothing is written, and the error matches ErrWrongOffset
// and, through errors.As, is a *WrongOffsetError whose Actual is the end
// offset found. Read from where you stopped up to Actual, decide again
// and retry with Actual as the end.
//
// The check and the append are one step, under the lock that gives the
// partition's records their offsets: of any number of concurrent
// AppendIfEnd calls with the same end, exactly one succeeds, and a
// concurrent Append or AppendTo either comes before (and the conditional
// one fails) or after.
//
// The end compared is the log end offset, which under SyncNever and
// SyncEvery is also the high watermark (what readers see). Under SyncAlways
// an append's records get their offsets before its fsync and become
// visible after it, so while another append's fsync runs the end offset is
// past what readers see (ListOffsets(Latest), Read): a writer that read to
// the end gets ErrWrongOffset with an Actual its reads reach once that
// fsync is done, so it reads up to Actual with Fetch, which waits for
// them, before it decides again. Comparing with what readers see instead
// would let it append after records it never read.
//
// Bad input is refused first, whatever the end offset: a negative end is
// ErrOffsetOutOfRange; an unknown topic or partition, no records, or a
// batch over MaxBatchBytes are as for AppendTo. After Close it is
// ErrClosed. Durability is as for Append; ctx is checked before anything
// is written.
func (s *Store) AppendIfEnd(ctx context.Context, topicName string, part int, end int64, records ...Record) (_ int64, err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	t, err := s.userTopic("append", topicName)
	if err != nil {
		return 0, err
	}
	p, err := t.Partition(part)
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return p.AppendIfEnd(records, end)
}
