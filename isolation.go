package strata

import (
	"context"
	"fmt"

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

// checkIsolation refuses, with ErrInvalidConfig, a level that is none of
// the three. The read paths return its error through storeErr, which
// gives it the store's prefix.
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

// level returns the partition package's level of i, which isolation
// resolved.
func (i Isolation) level() partition.Isolation {
	if i == ReadCommitted {
		return partition.ReadCommitted
	}
	return partition.ReadUncommitted
}

// readEnd is the end of what a read at iso sees of p: the last stable
// offset (never past the high watermark) under ReadCommitted, else the
// high watermark.
func readEnd(p *partition.Partition, iso Isolation) int64 {
	return p.VisibleEnd(iso.level())
}

// waitEnd blocks until a read at iso sees offset of p (readEnd > offset),
// ctx ends or p closes.
func waitEnd(ctx context.Context, p *partition.Partition, iso Isolation, offset int64) error {
	return p.WaitIsolation(ctx, offset, iso.level())
}

// txnFilter returns the filter of the batches of aborted transactions for
// a read of p at iso that shows it batches in rising offset order: nil,
// which skips nothing, under ReadUncommitted.
func txnFilter(p *partition.Partition, iso Isolation) *partition.TxnFilter {
	if iso != ReadCommitted {
		return nil
	}
	return p.NewTxnFilter()
}

// cutAt looks at back-to-back batches for those whose base offset is at
// or past end, which a read that ends at end leaves out: it returns the
// offset after the last batch before them (-1 if none) and how many bytes
// they take at the end of batches. Damage ends the look: the bytes from
// it are kept, for the read to report.
func cutAt(batches []byte, end int64) (next int64, cut int) {
	next = -1
	for it := log.NewBatchIter(batches); it.Next(); {
		h := it.Header()
		if h.BaseOffset >= end {
			return next, len(batches) - it.Pos()
		}
		next = h.NextOffset()
	}
	return next, 0
}
