package strata

import "iter"

// Scan returns an iterator over a partition's records from offset up to
// the end offset as of the call (ListOffsets' Latest then): it reads what
// is there and stops, never waiting for more, where Records tails the
// partition. A Scan at the end offset, or of an empty partition, yields
// nothing; records appended after the call are not yielded, and ranging
// over the iterator again reads up to the same end. Offsets compaction
// removed and transaction markers are stepped over.
//
// A yielded record's bytes alias the partition's memory mapping (or the
// buffer a compressed batch was decompressed into): they are valid only
// until the loop body returns; copy what you keep. Break out of the loop
// to stop early.
//
// An error is yielded once, as the last element: ErrOffsetOutOfRange for an
// offset outside [start, end] (also when retention or DeleteRecords moves
// the start offset past the scan as it reads), ErrCorrupt at a damaged
// batch (after the intact records before it), ErrClosed once the store is
// closed, and ErrUnknownTopic or ErrUnknownPartition.
//
// Under ReadCommitted the end is the last stable offset as of the call
// (ListOffsets' Latest at that level), and the records of aborted
// transactions are skipped.
func (s *Store) Scan(topicName string, part int, offset int64) iter.Seq2[Record, error] {
	return s.scan(0, topicName, part, offset)
}

// scan is Scan at isolation level iso (zero for the store's).
func (s *Store) scan(iso Isolation, topicName string, part int, offset int64) iter.Seq2[Record, error] {
	p, err := s.partition(topicName, part)
	if err == nil {
		err = checkIsolation(iso)
	}
	if err != nil {
		err = storeErr(err)
		return func(yield func(Record, error) bool) { yield(Record{}, err) }
	}
	iso = s.isolation(iso)
	end := readEnd(p, iso)
	return func(yield func(Record, error) bool) {
		r := p.NewReaderIsolation(offset, iso.level())
		defer r.Close()
		var rec Record
		for {
			ok, err := r.Next(&rec)
			if err != nil {
				yield(Record{}, storeErr(err))
				return
			}
			if !ok || rec.Offset >= end || !yield(rec, nil) {
				return
			}
		}
	}
}
