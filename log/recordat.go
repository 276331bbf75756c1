package log

// ReadRecordAt reads into r the one record at byte pos of plain, checked as
// a RecordIter checks it, without setting up an iterator: plain is the
// plain form of a batch whose header h the caller has read (what
// Decoder.Plain returns for it: an uncompressed batch itself), and the
// caller has stepped over its first read records by their length prefixes,
// the last of which has offset delta prev (-1 if read is 0), as for
// NewRecordIterAt. It sets r as RecordIter.Next does and reports what the
// first Next of Decoder.IterAt's iterator would: false with no error when
// the read records are all of the batch's and fill it exactly, and
// ErrCorrupt for a point no record can start at, a bad record, or bytes
// left after the last record. A header that is not plain's makes the
// record read wrong, never a panic.
func ReadRecordAt(plain []byte, h *BatchHeader, pos int, read int32, prev int64, r *Record) (bool, error) {
	if err := checkStart(h, len(plain), pos, read, prev); err != nil {
		return false, err
	}
	// The header fields next reads, one by one: the caller has just
	// stored them so (ReadHeaderInto), and a copy of the whole header in
	// wide moves would wait for those stores (store forwarding fails).
	it := RecordIter{b: plain, pos: pos, n: read, prev: prev}
	it.h.BaseOffset, it.h.BaseTimestamp, it.h.MaxTimestamp = h.BaseOffset, h.BaseTimestamp, h.MaxTimestamp
	it.h.Attributes, it.h.LastOffsetDelta, it.h.NumRecords = h.Attributes, h.LastOffsetDelta, h.NumRecords
	ok := it.next(r)
	return ok, it.err
}

// checkStart checks that byte pos of the plain form, of size bytes, of a
// batch with header h can follow read records the last of which has offset
// delta prev (-1 if read is 0).
func checkStart(h *BatchHeader, size, pos int, read int32, prev int64) error {
	if pos < BatchHeaderSize || pos > size || read < 0 || read > h.NumRecords ||
		prev < -1 || prev > int64(h.LastOffsetDelta) || (read == 0) != (pos == BatchHeaderSize) || (read == 0) != (prev == -1) {
		return errorf(ErrCorrupt, "no record %d at byte %d after offset delta %d in a batch of %d records and %d bytes",
			read, pos, prev, h.NumRecords, size)
	}
	return nil
}
