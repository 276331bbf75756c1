package strata

import (
	"fmt"

	"github.com/stratalog/strata/log"
)

// Get returns the record at offset of a partition, its key, value and
// headers copied into memory of its own: the caller may keep it. It never
// blocks and allocates one buffer for the record's bytes (and, for a record
// with headers, the Headers slice and a string per header key). GetInto
// reads into a buffer of the caller's instead.
//
// A lookup finds the batch through the segment's offset index and steps
// over the batch's earlier records without decoding them, as a
// partition.Reader's SetOffset does; a record of a compressed batch costs
// decompressing the batch.
//
// Errors: an offset below the start offset or at or past the end offset
// (ListOffsets' Earliest and Latest) is ErrOffsetOutOfRange, with the range
// [start, end) in the message; an offset in that range that holds no
// record — compaction removed it, or a transaction's marker takes it — is
// ErrNoRecord (Scan from it to reach the next record); damage on disk is
// ErrCorrupt, with the file and position; an unknown topic or partition is
// ErrUnknownTopic or ErrUnknownPartition; after Close, ErrClosed.
//
// Under ReadCommitted the range ends at the last stable offset, and a
// record of an aborted transaction is ErrNoRecord. A lookup of an offset
// that an aborted transaction's range covers, whatever batch holds it,
// also reads that batch's header again and allocates the list of the
// aborted transactions there: neither Get's one buffer nor GetInto's none
// hold for it.
func (s *Store) Get(topicName string, part int, offset int64) (Record, error) {
	return s.getInto(0, topicName, part, offset, nil)
}

// GetInto is Get that copies the record's key, value and header values
// into dst, from its start (its length is ignored), and returns a Record
// that aliases dst: it is valid until dst is written again, and stays
// valid after the store moves on (retention, compaction, Close). When
// dst's capacity is short, GetInto allocates a buffer that fits instead;
// size dst for the largest records (a topic's MaxBatchBytes bounds an
// uncompressed one) and a lookup of a record without headers allocates
// nothing. Errors are Get's.
func (s *Store) GetInto(topicName string, part int, offset int64, dst []byte) (Record, error) {
	return s.getInto(0, topicName, part, offset, dst)
}

// getInto is GetInto at isolation level iso (zero for the store's).
func (s *Store) getInto(iso Isolation, topicName string, part int, offset int64, dst []byte) (_ Record, err error) {
	defer wrapErr(&err)
	p, err := s.partition(topicName, part)
	if err != nil {
		return Record{}, err
	}
	if err := checkIsolation(iso); err != nil {
		return Record{}, err
	}
	committed := s.isolation(iso) == ReadCommitted
	var end int64
	if committed {
		end = readEnd(p, ReadCommitted)
		if start := p.StartOffset(); offset < start || offset >= end {
			return Record{}, fmt.Errorf("strata: offset %d of %s-%d out of range [%d, %d) (read_committed: the end is the last stable offset): %w",
				offset, topicName, part, start, end, ErrOffsetOutOfRange)
		}
	}
	var r Record
	var h *log.BatchHeader // wanted only to ask InAbortedTxn
	if committed {
		h = new(log.BatchHeader)
	}
	if _, err := p.ReadRecordInto(offset, &r, dst, h); err != nil {
		return Record{}, err
	}
	if committed && p.InAbortedTxn(*h) {
		return Record{}, fmt.Errorf("strata: offset %d of %s-%d holds a record of an aborted transaction: %w", offset, topicName, part, ErrNoRecord)
	}
	return r, nil
}
