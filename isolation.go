package strata

import (
	"context"
	"fmt"
	"iter"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
)

// Isolation is a read's isolation level, Kafka's isolation.level: what a
// read sees of the records that transactions write.
//
// The zero Isolation is the default: in Options it is ReadUncommitted
// (Kafka's default); in ConsumerOptions and View it is the store's
// Options.Isolation.
type Isolation uint8

// The isolation levels.
const (
	// ReadUncommitted reads every record up to the high watermark (Latest),
	// those of transactions still open or aborted included (Kafka's
	// read_uncommitted).
	ReadUncommitted Isolation = iota + 1
	// ReadCommitted reads up to the last stable offset, the first offset
	// of the earliest transaction still open (the high watermark when none
	// is), and skips the records of aborted transactions, as Kafka's
	// read_committed does with the aborted-transaction index: a reader
	// sees a transaction's records once it has committed, all of them, and
	// never those of one that aborted. What it reads is in offset order,
	// so a transaction still open holds back the records after its first
	// one, those of other writers included.
	ReadCommitted
)

// String returns the level's name in Kafka's configuration:
// "read_uncommitted" or "read_committed" ("default" for the zero value).
func (i Isolation) String() string {
	switch i {
	case 0:
		return "default"
	case ReadUncommitted:
		return "read_uncommitted"
	case ReadCommitted:
		return "read_committed"
	}
	return fmt.Sprintf("Isolation(%d)", uint8(i))
}

// checkIsolation refuses a level that is none of the three.
func checkIsolation(i Isolation) error {
	if i > ReadCommitted {
		return fmt.Errorf("isolation %v is not ReadUncommitted or ReadCommitted: %w", i, ErrInvalidConfig)
	}
	return nil
}

// isolation resolves i, which checkIsolation accepted: the zero value is
// the store's level.
func (s *Store) isolation(i Isolation) Isolation {
	if i == 0 {
		return s.opts.Isolation
	}
	return i
}

// readEnd is the end of what a read at iso sees of p: the last stable
// offset under ReadCommitted, else the high watermark.
func readEnd(p *partition.Partition, iso Isolation) int64 {
	if iso == ReadCommitted {
		return lastStable(p)
	}
	return p.HighWatermark()
}

// waitEnd blocks until a read at iso sees offset of p (readEnd > offset),
// ctx ends or p closes. The last stable offset moves only when something
// is appended (a marker), so it waits for the high watermark to move from
// where it was before the last stable offset was looked at.
func waitEnd(ctx context.Context, p *partition.Partition, iso Isolation, offset int64) error {
	if iso != ReadCommitted {
		return p.Wait(ctx, offset)
	}
	for {
		hw := p.HighWatermark()
		if lastStable(p) > offset {
			return nil
		}
		if err := p.Wait(ctx, max(hw, offset)); err != nil {
			return err
		}
	}
}

// abortFilter tells the batches of aborted transactions, for a read of a
// partition's [from, upto).
type abortFilter struct {
	aborted []abortedTxn
}

// newAbortFilter returns the filter of p's batches in [from, upto) at
// iso: nil, which skips nothing, under ReadUncommitted or where no
// aborted transaction overlaps.
func newAbortFilter(p *partition.Partition, iso Isolation, from, upto int64) *abortFilter {
	if iso != ReadCommitted || from >= upto {
		return nil
	}
	aborted := abortedTxns(p, from, upto)
	if len(aborted) == 0 {
		return nil
	}
	return &abortFilter{aborted: aborted}
}

// skips reports whether the batch of h belongs to an aborted transaction:
// a transactional batch of a producer written from the first offset of
// one of its aborted transactions up to the ABORT marker that ended it.
// (A producer has at most one transaction open in a partition, so every
// transactional batch of it in that range is that transaction's.)
func (f *abortFilter) skips(h log.BatchHeader) bool {
	if f == nil || !h.IsTransactional() || h.IsControl() {
		return false
	}
	for _, t := range f.aborted {
		if t.ProducerID == h.ProducerID && t.FirstOffset <= h.BaseOffset && h.BaseOffset < t.LastOffset {
			return true
		}
	}
	return false
}

// cutAt returns the leading batches of back-to-back batches whose base
// offset is below end: what a read that ends at end may return.
func cutAt(batches []byte, end int64) []byte {
	n := 0
	for it := log.NewBatchIter(batches); it.Next(); {
		if it.Header().BaseOffset >= end {
			return batches[:n]
		}
		n += len(it.Batch())
	}
	return batches // all of them, or up to damage that the read reports
}

// checkIsolation refuses, with ErrInvalidConfig, a level that is none of
// the three.
func (s *Store) checkIsolation(i Isolation) error {
	if err := checkIsolation(i); err != nil {
		return fmt.Errorf("strata: %w", err)
	}
	return nil
}

// committedRecords iterates p's records from offset on at ReadCommitted,
// up to stop (exclusive; -1 for no bound). At the end of what it sees it
// stops, or, with tail set, waits for the last stable offset to move, until
// ctx ends or p closes. It yields a final error as Store.Records does. The
// records alias a buffer it reuses: they are valid until the loop body
// returns.
func committedRecords(ctx context.Context, p *partition.Partition, offset, stop int64, tail bool) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		var buf []byte
		for {
			end := lastStable(p)
			if stop >= 0 {
				end = min(end, stop)
			}
			var err error
			if buf, err = p.ReadBatches(buf, offset, readBytes); err != nil {
				yield(Record{}, storeErr(err))
				return
			}
			batches := cutAt(buf, end)
			if len(batches) == 0 {
				if !tail || (stop >= 0 && offset >= stop) {
					return
				}
				if err := waitEnd(ctx, p, ReadCommitted, offset); err != nil {
					yield(Record{}, storeErr(err))
					return
				}
				continue
			}
			next := lastNext(batches)
			for r, err := range recordsOf(batches, p.MaxDecompressed(), newAbortFilter(p, ReadCommitted, offset, next)) {
				if err != nil {
					yield(Record{}, storeErr(err))
					return
				}
				if r.Offset < offset {
					continue
				}
				if !yield(r, nil) {
					return
				}
				offset = r.Offset + 1
			}
			offset = max(offset, next)
		}
	}
}
