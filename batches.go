package strata

import (
	"iter"

	"github.com/stratalog/strata/log"
)

// recordsOf iterates the records of back-to-back batches, each record with
// its own Headers slice; keys and values alias the batches.
func recordsOf(batches []byte) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for len(batches) > 0 {
			h, err := log.ReadHeader(batches)
			if err != nil {
				yield(Record{}, err)
				return
			}
			for r, err := range log.Records(batches[:h.Size()]) {
				if !yield(r, err) || err != nil {
					return
				}
			}
			batches = batches[h.Size():]
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
