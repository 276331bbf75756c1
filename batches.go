package strata

import (
	"iter"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
)

// recordsOf iterates the records of back-to-back batches, each record with
// its own Headers slice; keys and values alias the batches, or, for a
// compressed batch, a buffer of its own that it is decompressed into (up
// to limit bytes). Control batches (transaction markers) yield nothing, nor
// do the batches of aborted transactions that f tells (nil tells none).
func recordsOf(batches []byte, limit int, f *partition.TxnFilter) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		it := log.NewBatchIter(batches)
		for it.Next() {
			h := it.Header()
			if h.IsControl() || (f != nil && f.Aborted(h)) {
				continue
			}
			// A Decoder per batch: the records handed out alias its
			// buffer, which the next batch must not overwrite.
			d := log.Decoder{Limit: limit}
			ri, err := d.Iter(it.Batch(), h)
			if err != nil {
				yield(Record{}, err)
				return
			}
			for {
				var r Record
				if !ri.Next(&r) {
					break
				}
				if !yield(r, nil) {
					return
				}
			}
			if err := ri.Err(); err != nil {
				yield(Record{}, err)
				return
			}
		}
		if err := it.Err(); err != nil {
			yield(Record{}, err)
		}
	}
}
