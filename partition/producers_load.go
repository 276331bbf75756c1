package partition

import (
	"github.com/stratalog/strata/log"
)

// replayProducersMuLocked enters the producer batches and markers of the
// log from offset from on into the producer state, as Kafka rebuilds it
// from the log after its latest snapshot (UnifiedLog's
// loadProducersFromRecords): without the checks an append makes, since the
// log holds what was accepted. With index, an ABORT marker that ends a
// transaction is entered into the aborted-transaction index again (which
// may hold it already: the index keeps one entry per marker offset). A damaged batch ends
// the replay of its segment (logged): reads of it fail too. The caller
// holds mu (or is Open).
func (p *Partition) replayProducersMuLocked(from int64, index bool) error {
	ps := &p.mu.producers
	for _, r := range p.state.Load().segs {
		if r.seg.NextOffset() <= from {
			continue
		}
		c, err := r.seg.CursorAt(from)
		if err != nil {
			p.cfg.Logger.Warn("partition: producer state: cannot read a segment", "dir", p.dir, "base", r.seg.Base(), "err", err)
			continue
		}
		for {
			h, b, err := c.Next()
			if err != nil {
				p.cfg.Logger.Warn("partition: producer state: stopped at damage in a segment", "dir", p.dir, "base", r.seg.Base(), "err", err)
				break
			}
			if b == nil {
				break
			}
			if err := p.replayBatchMuLocked(ps, b, h, index); err != nil {
				return err
			}
		}
	}
	p.publishTxnsMuLocked()
	return nil
}

// replayBatchMuLocked enters one batch of the log into ps.
func (p *Partition) replayBatchMuLocked(ps *producerState, b []byte, h log.BatchHeader, index bool) error {
	if h.ProducerID < 0 || h.IsLegacy() {
		return nil
	}
	if !h.IsControl() {
		ps.applyData(h, nil)
		return nil
	}
	m, ok, err := parseMarker(b, h)
	if err != nil {
		p.cfg.Logger.Warn("partition: producer state: passing over a control batch", "dir", p.dir, "offset", h.BaseOffset, "err", err)
		return nil
	}
	if !ok {
		return nil
	}
	if !index {
		ps.applyMarker(h.ProducerID, h.ProducerEpoch, m.coordinatorEpoch, h.BaseOffset, h.MaxTimestamp, false)
		return nil
	}
	return p.applyProducerMuLocked(producerOp{marker: true, m: m}, h)
}
