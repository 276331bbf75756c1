package strata

import (
	"context"
	"fmt"

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
	if err := s.checkWritable("append"); err != nil {
		return -1, err
	}
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

// NoOffset, as AppendIfLast's last, means that the key has no record in
// its partition yet (EventStoreDB's "no stream"); as a *WrongOffsetError's
// Actual, that it had none.
const NoOffset = partition.NoOffset

// ErrWrongKey means a record given to AppendIfLast has a key other than
// the one checked.
var ErrWrongKey = partition.ErrWrongKey

// ErrPendingTransaction means AppendIfLast found the key's last record at
// or past the first offset of a transaction still open in the partition
// (a record of the transaction, or one appended after its first), and
// wrote nothing: a ReadCommitted load of the key cannot see that record
// until the transaction ends, and the transaction may still abort. Retry
// once it has ended: load the key again, decide again. It does not match
// ErrWrongOffset.
var ErrPendingTransaction = partition.ErrPendingTransaction

// AppendIfLast appends records, all with key as their Key, to the key's
// partition (PartitionFor), as one batch, only if the last record with key
// there is still at offset last, or, with last NoOffset, if there is no
// record with key yet. It returns the offset of the first record; the
// others follow densely. This is the expected version of an event-sourced
// aggregate kept as the records of one key: load its records, decide, and
// append the new events at the offset of the last one loaded. If another
// writer appended to the key since, nothing is written, and the error
// matches ErrWrongOffset and, through errors.As, is a *WrongOffsetError
// with the Key and the Actual offset of its last record (NoOffset if none):
// load the records you missed, decide again and retry with Actual. Records
// of other keys appended meanwhile do not matter.
//
// The check and the append are one step, under the lock that gives the
// partition's records their offsets: of any number of concurrent
// AppendIfLast calls for one key with the same last, exactly one succeeds.
//
// With transactions: while the key's last record lies at or past the
// first offset of a transaction still open in the partition, AppendIfLast
// returns ErrPendingTransaction, whatever last is, and writes nothing;
// retry once the transaction has ended (its Commit, Abort or timeout). A
// record of an aborted transaction can be the key's last record: then it
// is a mismatch's Actual, though ReadCommitted reads never return it, and
// a retry with that Actual is taken (the aborted record counts for
// nothing, so nothing is lost).
//
// A key's last record is its last one retained: once retention or
// DeleteRecords removed every record of a key, or compaction removed its
// last one, a tombstone (which a compacted topic does after its
// DeleteRetention), the key has no record (NoOffset). Under SyncAlways the
// last offset can be one readers see only once another append's fsync is
// done; Fetch waits for it.
//
// The store keeps, per partition, the key of every record and the offset
// of its last one in memory (about 72 bytes per key of 8 bytes), but only
// once AppendIfLast is first called on the partition after Open: that
// call reads the whole partition to build the map (other appends go on
// meanwhile), so it costs a scan of the partition; from then on every
// append to the partition enters its keys, and a check costs a map lookup
// whatever the partition's size. The map holds every key appended since it
// was built, those whose records retention removed too, until the next
// Open. Open stays as fast as it was: nothing is read there, and nothing
// of the map is written to disk.
//
// Bad input is refused first, whatever the offsets: a nil key is ErrNoKey,
// a record with another key ErrWrongKey, a last below NoOffset
// ErrOffsetOutOfRange; an unknown topic, no records, or a batch over
// MaxBatchBytes are as for Append. After Close it is ErrClosed.
// Durability is as for Append; ctx is checked before anything is written.
func (s *Store) AppendIfLast(ctx context.Context, topicName string, key []byte, last int64, records ...Record) (_ int64, err error) {
	if err := s.checkWritable("append"); err != nil {
		return -1, err
	}
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	t, err := s.userTopic("append", topicName)
	if err != nil {
		return 0, err
	}
	if key == nil {
		return 0, fmt.Errorf("strata: append to %s: a nil key: %w", topicName, ErrNoKey)
	}
	p, err := t.Partition(t.Route(key))
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return p.AppendIfLast(records, key, last)
}
