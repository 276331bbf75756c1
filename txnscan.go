package strata

import (
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
)

// abortedTxn is an aborted transaction of a partition: its producer, its
// first offset and the offset of its ABORT marker.
type abortedTxn struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64
}

// scanTxns reads p's batches below its high watermark and returns the
// aborted transactions overlapping [from, upto) and the first offset of
// the earliest transaction still open (the high watermark if none is).
func scanTxns(p *partition.Partition, from, upto int64) ([]abortedTxn, int64) {
	hw := p.HighWatermark()
	open := map[int64]int64{}
	var aborted []abortedTxn
	var buf []byte
	for off := p.StartOffset(); off < hw; {
		var err error
		buf, err = p.ReadBatches(buf, off, 1<<20)
		if err != nil || len(buf) == 0 {
			break
		}
		it := log.NewBatchIter(buf)
		for it.Next() {
			h := it.Header()
			if h.BaseOffset >= hw {
				break
			}
			off = h.NextOffset()
			if !h.IsTransactional() {
				continue
			}
			if !h.IsControl() {
				if _, ok := open[h.ProducerID]; !ok {
					open[h.ProducerID] = h.BaseOffset
				}
				continue
			}
			first, ok := open[h.ProducerID]
			if !ok {
				continue
			}
			delete(open, h.ProducerID)
			var d log.Decoder
			ri, err := d.Iter(it.Batch(), h)
			if err != nil {
				continue
			}
			var r log.Record
			if ri.Next(&r) {
				if t, err := log.ParseControlKey(r.Key); err == nil && t == log.ControlAbort && first < upto && h.BaseOffset >= from {
					aborted = append(aborted, abortedTxn{ProducerID: h.ProducerID, FirstOffset: first, LastOffset: h.BaseOffset})
				}
			}
		}
		if it.Err() != nil {
			break
		}
	}
	lso := hw
	for _, first := range open {
		lso = min(lso, first)
	}
	return aborted, lso
}

// lastStable returns p's last stable offset.
func lastStable(p *partition.Partition) int64 {
	_, lso := scanTxns(p, 0, 0)
	return lso
}

// abortedTxns returns p's aborted transactions that overlap [from, upto).
func abortedTxns(p *partition.Partition, from, upto int64) []abortedTxn {
	a, _ := scanTxns(p, from, upto)
	return a
}
