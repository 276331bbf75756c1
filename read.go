package strata

import (
	"context"
	"fmt"
	"iter"
	"math"
	"slices"
	"time"

	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
)

// readBytes is how much Read asks of a partition at a time.
const readBytes = 1 << 20

// Read returns up to max records of a partition from offset on, as many as
// readers see now (none at the end offset). The records are the caller's:
// their keys and values share the few buffers the call copied batches into,
// not the store's memory. An offset outside [start, end] is
// ErrOffsetOutOfRange, with the range. A read returns the intact records
// before a damaged batch without an error; the read that starts at the
// damaged batch fails (ErrCorrupt, with the file and position). A max
// below 1 is ErrInvalidConfig.
//
// Under ReadCommitted (Options.Isolation, or a View) a read ends at the
// last stable offset and skips the records of aborted transactions; an
// offset from the last stable offset to the end offset reads nothing.
func (s *Store) Read(ctx context.Context, topicName string, part int, offset int64, max int) ([]Record, error) {
	return s.read(ctx, 0, topicName, part, offset, max)
}

// read is Read at isolation level iso (zero for the store's).
func (s *Store) read(ctx context.Context, iso Isolation, topicName string, part int, offset int64, max int) (_ []Record, err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	p, err := s.partition(topicName, part)
	if err != nil {
		return nil, err
	}
	if err := checkMax("read", topicName, part, max); err != nil {
		return nil, err
	}
	if err := checkIsolation(iso); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return readRecords(p, s.isolation(iso), offset, max)
}

// Fetch is Read that waits, as Kafka's fetch.max.wait.ms does: when there
// is nothing at offset yet, it waits up to maxWait (or until ctx ends) for
// records to arrive, and returns what is there then (possibly nothing).
// A maxWait of 0 or less does not wait: Fetch is then Read. A max below 1
// is ErrInvalidConfig, as for Read. Under ReadCommitted it waits for the
// last stable offset to pass offset.
func (s *Store) Fetch(ctx context.Context, topicName string, part int, offset int64, max int, maxWait time.Duration) ([]Record, error) {
	return s.fetch(ctx, 0, topicName, part, offset, max, maxWait)
}

// fetch is Fetch at isolation level iso (zero for the store's).
func (s *Store) fetch(ctx context.Context, iso Isolation, topicName string, part int, offset int64, max int, maxWait time.Duration) (_ []Record, err error) {
	defer wrapErr(&err)
	ctx = orBackground(ctx)
	p, err := s.partition(topicName, part)
	if err != nil {
		return nil, err
	}
	if err := checkMax("fetch", topicName, part, max); err != nil {
		return nil, err
	}
	if err := checkIsolation(iso); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	iso = s.isolation(iso)
	recs, reached, err := appendRecords(nil, p, iso, offset, max, asRecord)
	if err != nil || len(recs) > 0 || maxWait <= 0 {
		return recs, err
	}
	wctx, cancel := context.WithTimeout(ctx, maxWait)
	defer cancel()
	// Wait past what the read stepped over (control batches, gaps), so
	// that a marker at offset does not make every Fetch return at once.
	if err := waitEnd(wctx, p, iso, reached); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if wctx.Err() == nil {
			return nil, err // closed
		}
		return nil, nil // waited maxWait: nothing new
	}
	return readRecords(p, iso, reached, max) // what lies before reached holds no record
}

// checkMax refuses a read (verb) of fewer than one record.
func checkMax(verb, topicName string, part int, max int) error {
	if max < 1 {
		return fmt.Errorf("strata: %s of %s-%d: max %d records out of range [1, %d]: %w", verb, topicName, part, max, math.MaxInt, ErrInvalidConfig)
	}
	return nil
}

func readRecords(p *partition.Partition, iso Isolation, offset int64, limit int) ([]Record, error) {
	recs, _, err := appendRecords(nil, p, iso, offset, limit, asRecord)
	return recs, err
}

// asRecord is the wrap of appendRecords that keeps records as they are.
func asRecord(r Record) Record { return r }

// appendRecords appends to dst, each made by wrap, up to limit records of p
// from offset on, as many as readers at iso see now, and returns the offset the
// read reached: after the last record appended, or further, past what it
// stepped over after it (control batches, offsets compaction removed)
// when it read everything readers see. That is where the next read
// starts, as Kafka's consumers move their position to a batch's next
// offset. An error after it appended records (damage further on) ends the
// read without an error: the records before the damage are returned, and
// the next read, which starts at the damage, reports it.
func appendRecords[T any](dst []T, p *partition.Partition, iso Isolation, offset int64, limit int, wrap func(Record) T) ([]T, int64, error) {
	n, want := len(dst), len(dst)+limit
	// failed ends the read at an error: none if records came before it.
	failed := func(err error) ([]T, int64, error) {
		if len(dst) > n {
			err = nil
		}
		return dst, offset, err
	}
	// Ask for about what limit records of a few hundred bytes take, so a
	// small Read copies little; a short answer just means another round.
	chunk := min(readBytes, max(16<<10, limit*256))
	f := txnFilter(p, iso)
	for len(dst) < want {
		// A read_committed read ends at the last stable offset as of before
		// the read: every batch below it is stable, and the aborted
		// transactions below it are in the index.
		end := int64(math.MaxInt64)
		if iso == ReadCommitted {
			end = readEnd(p, iso)
		}
		// A fresh buffer each time: the records returned alias it.
		batches, err := p.ReadBatches(nil, offset, chunk)
		if err != nil {
			return failed(err)
		}
		next, cut := cutAt(batches, end)
		batches = batches[:len(batches)-cut]
		if len(batches) == 0 {
			break
		}
		// Room for every offset the batches hold from offset on (fewer
		// records where compaction left gaps), rather than growing by
		// doubling.
		dst = slices.Grow(dst, int(max(0, min(int64(want-len(dst)), next-offset))))
		for r, err := range recordsOf(batches, p.MaxDecompressed(), f) {
			if err != nil {
				return failed(err)
			}
			if r.Offset < offset {
				continue
			}
			dst = append(dst, wrap(r))
			offset = r.Offset + 1
			if len(dst) == want {
				return dst, offset, nil
			}
		}
		offset = max(offset, next)
		if cut > 0 {
			break // what follows is at or past the end
		}
	}
	return dst, offset, nil
}

// Records returns an iterator over a partition's records from offset on that
// tails it: at the end it waits for new records until ctx ends or the store
// closes. It yields a final error and stops (ctx.Err(), ErrOffsetOutOfRange,
// ErrClosed). A yielded record's bytes are valid only until the loop body
// returns; copy what you keep. Under ReadCommitted it yields the records
// below the last stable offset, without those of aborted transactions, and
// waits for the last stable offset to move.
func (s *Store) Records(ctx context.Context, topicName string, part int, offset int64) iter.Seq2[Record, error] {
	return s.records(ctx, 0, topicName, part, offset)
}

// records is Records at isolation level iso (zero for the store's).
func (s *Store) records(ctx context.Context, iso Isolation, topicName string, part int, offset int64) iter.Seq2[Record, error] {
	ctx = orBackground(ctx)
	p, err := s.partition(topicName, part)
	if err == nil {
		err = checkIsolation(iso)
	}
	if err != nil {
		err = storeErr(err)
		return func(yield func(Record, error) bool) { yield(Record{}, err) }
	}
	iso = s.isolation(iso)
	return func(yield func(Record, error) bool) {
		r := p.NewReaderIsolation(offset, iso.level())
		defer r.Close()
		var rec Record
		for {
			if err := r.NextWait(ctx, &rec); err != nil {
				yield(Record{}, storeErr(err))
				return
			}
			if !yield(rec, nil) {
				return
			}
		}
	}
}

// OffsetSpec says which offset ListOffsets looks up: Earliest, Latest, or
// AtTime(t). Its zero value names none: ListOffsets and SeekTo refuse it
// with ErrInvalidConfig, as ResetOffsets refuses a zero ResetSpec, rather
// than take it for one of them.
type OffsetSpec struct {
	kind specKind
	ts   int64 // AtTime's, in Unix milliseconds
}

type specKind uint8

const (
	specNone specKind = iota
	specEarliest
	specLatest
	specTime
	specMaxTime
)

// The offset specs of ListOffsets, as Kafka's ListOffsets request has them.
var (
	// Earliest is the start offset: the first retained record's.
	Earliest = OffsetSpec{kind: specEarliest}
	// Latest is the end offset, Kafka's high watermark: the end of what
	// readers see, the offset the next record gets once every append so
	// far is visible. Records become visible when their Append returns:
	// once written to the OS, or, under SyncAlways, once fsynced. Every read
	// and every commit uses this same boundary, so a record that was read
	// is always below Latest, and committing its offset + 1 is in range.
	Latest = OffsetSpec{kind: specLatest}
	// MaxTimestamp is the offset of the first record, in offset order,
	// with the largest timestamp (Kafka's ListOffsets MAX_TIMESTAMP,
	// KIP-734); -1 for a partition without records. Transaction markers
	// do not count.
	MaxTimestamp = OffsetSpec{kind: specMaxTime}
)

// AtTime is the offset of the first record, in offset order, whose
// timestamp is at or after t (a t before 1970 is 1970).
func AtTime(t time.Time) OffsetSpec { return OffsetSpec{kind: specTime, ts: max(0, t.UnixMilli())} }

// errZeroSpec is the reason a zero OffsetSpec is refused.
const errZeroSpec = "the zero OffsetSpec names no offset (use Earliest, Latest, AtTime or MaxTimestamp)"

// ListOffsets looks up an offset of a partition: Earliest, Latest,
// AtTime(t) or MaxTimestamp. For AtTime and MaxTimestamp, -1 means no
// record matches (Kafka's answer). The zero OffsetSpec is
// ErrInvalidConfig.
//
// Under ReadCommitted, as Kafka's ListOffsets with isolation_level 1 (its
// consumers' read_committed end), Latest is the last stable offset, and
// AtTime and MaxTimestamp find only offsets below it (-1 otherwise).
func (s *Store) ListOffsets(topicName string, part int, spec OffsetSpec) (int64, error) {
	return s.listOffsets(0, topicName, part, spec)
}

// OffsetTime is an offset ListOffsetTime found and the timestamp of its
// record, as Kafka's ListOffsets answers.
type OffsetTime struct {
	// Offset is the offset, -1 when no record matches (AtTime,
	// MaxTimestamp).
	Offset int64
	// Timestamp is the record's timestamp for AtTime and MaxTimestamp;
	// zero for Earliest and Latest (Kafka answers -1 for them), and when
	// Offset is -1.
	Timestamp time.Time
}

// ListOffsetTime is ListOffsets with the timestamp of the record found:
// for AtTime(t), the first record at or after t and its own timestamp
// (which may be later than t); for MaxTimestamp, the record with the
// largest timestamp and that timestamp.
func (s *Store) ListOffsetTime(topicName string, part int, spec OffsetSpec) (OffsetTime, error) {
	return s.listOffsetTime(0, topicName, part, spec)
}

// listOffsets is ListOffsets at isolation level iso (zero for the
// store's).
func (s *Store) listOffsets(iso Isolation, topicName string, part int, spec OffsetSpec) (int64, error) {
	ot, err := s.listOffsetTime(iso, topicName, part, spec)
	return ot.Offset, err
}

// listOffsetTime is ListOffsetTime at isolation level iso (zero for the
// store's).
func (s *Store) listOffsetTime(iso Isolation, topicName string, part int, spec OffsetSpec) (_ OffsetTime, err error) {
	defer wrapErr(&err)
	none := OffsetTime{Offset: -1}
	p, err := s.partition(topicName, part)
	if err != nil {
		return none, err
	}
	if err := checkIsolation(iso); err != nil {
		return none, err
	}
	iso = s.isolation(iso)
	end := readEnd(p, iso)
	var off, ts int64
	var found bool
	switch spec.kind {
	case specEarliest:
		return OffsetTime{Offset: p.StartOffset()}, nil
	case specLatest:
		return OffsetTime{Offset: end}, nil
	case specNone:
		return none, fmt.Errorf("strata: offset of %s-%d: %s: %w", topicName, part, errZeroSpec, ErrInvalidConfig)
	case specMaxTime:
		off, ts, found, err = p.OffsetForMaxTimestamp(end)
	default:
		off, ts, found, err = p.OffsetForTimestamp(spec.ts)
	}
	if err != nil || !found || off >= end {
		return none, err
	}
	return OffsetTime{Offset: off, Timestamp: time.UnixMilli(ts)}, nil
}

// partition returns a topic's partition, or the error saying why not.
func (s *Store) partition(topicName string, part int) (*partition.Partition, error) {
	_, p, err := s.topicPartition(topicName, part)
	return p, err
}

// topicPartition returns a topic and its partition, or the error saying why
// not.
func (s *Store) topicPartition(topicName string, part int) (*topic.Topic, *partition.Partition, error) {
	t, err := s.topic(topicName)
	if err != nil {
		return nil, nil, err
	}
	p, err := t.Partition(part)
	if err != nil {
		return nil, nil, fmt.Errorf("strata: %w", err)
	}
	return t, p, nil
}

// orBackground returns ctx, or context.Background() for a nil one: every
// method of the store that takes a context takes nil as "no deadline".
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
