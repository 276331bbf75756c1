package partition

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/log"
)

// A read_committed read of raw batches through a TxnFilter, and one batch
// at a time through InAbortedTxn, keeps exactly what a ReadCommitted
// Reader returns.
func TestTxnFilter(t *testing.T) {
	cfg := small(newClock())
	cfg.SegmentBytes = 256 << 10
	p, _ := memPartition(t, cfg)
	defer p.Close()
	w := newTxnWriter(t, p)
	for i := range 3000 {
		pid := int64(i % 3)
		w.write(pid, i, 2)
		w.end(pid, i%5 != 0)
		if i%200 == 0 {
			w.write(99, i, 1) // a long transaction, aborted at the end
		}
		if i%9 == 0 {
			plain(t, p, "plain")
		}
	}
	w.end(99, false)
	w.write(5, 0, 1) // open: the LSO stops here
	plain(t, p, "past the LSO")

	var want []int64
	for _, r := range readIso(t, p, 0, ReadCommitted) {
		want = append(want, r.Offset)
	}
	lso := p.LastStableOffset()
	for _, from := range []int64{0, 5000, 7001} {
		f := p.NewTxnFilter()
		var got, one []int64
		var buf []byte
		for off := from; off < lso; {
			batches, err := p.ReadBatches(buf, off, 64<<10)
			require.NoError(t, err)
			require.NotEmpty(t, batches)
			buf = batches[:0]
			for it := log.NewBatchIter(batches); it.Next(); {
				h := it.Header()
				off = h.NextOffset()
				if h.BaseOffset >= lso {
					off = lso
					break
				}
				if h.IsControl() {
					continue
				}
				skip := f.Aborted(h)
				require.Equal(t, skip, p.InAbortedTxn(h), "batch at %d", h.BaseOffset)
				recs, err := log.NewRecordIter(it.Batch())
				require.NoError(t, err)
				var r log.Record
				for recs.Next(&r) {
					if r.Offset >= from {
						if !skip {
							got = append(got, r.Offset)
						}
						one = append(one, r.Offset)
					}
				}
			}
		}
		var exp []int64
		for _, o := range want {
			if o >= from {
				exp = append(exp, o)
			}
		}
		require.Equal(t, exp, got, "from %d", from)
		require.Greater(t, len(one), len(got), "some were aborted")
		f.Reset()
	}
	h := log.BatchHeader{ProducerID: 5, Attributes: log.AttrTransactional, BaseOffset: lso}
	require.False(t, p.NewTxnFilter().Aborted(h), "an open transaction is not aborted")
}
