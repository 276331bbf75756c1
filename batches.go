package strata

import (
	"iter"

	"github.com/stratalog/strata/log"
)

// recordsOf iterates the records of back-to-back batches, each record with
// its own Headers slice; keys and values alias the batches, or, for a
// compressed batch, a buffer of its own that it is decompressed into (up
// to limit bytes). Control batches (transaction markers) yield nothing.
func recordsOf(batches []byte, limit int) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for len(batches) > 0 {
			h, err := log.ReadHeader(batches)
			if err != nil {
				yield(Record{}, err)
				return
			}
			batch := batches[:h.Size()]
			batches = batches[h.Size():]
			if h.IsControl() {
				continue
			}
			// A Decoder per batch: the records handed out alias its
			// buffer, which the next batch must not overwrite.
			d := log.Decoder{Limit: limit}
			it, err := d.Iter(batch, h)
			if err != nil {
				yield(Record{}, err)
				return
			}
			for {
				var r Record
				if !it.Next(&r) {
					break
				}
				if !yield(r, nil) {
					return
				}
			}
			if err := it.Err(); err != nil {
				yield(Record{}, err)
				return
			}
		}
	}
}

// lastNext returns the offset after the last of back-to-back batches.
func lastNext(batches []byte) int64 {
	next := int64(-1)
	for len(batches) > 0 {
		h, err := log.ReadHeader(batches)
		if err != nil {
			break
		}
		next = h.NextOffset()
		batches = batches[h.Size():]
	}
	return next
}
