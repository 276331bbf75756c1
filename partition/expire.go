package partition

import "time"

// ExpireProducers forgets the producers whose last batch or marker is
// stamped Config.ProducerIDExpiration or longer before now, and that have
// no transaction open in the partition, as Kafka's
// ProducerStateManager.removeExpiredProducers does; it returns how many
// went. EnforceRetention calls it, and Open applies it to the state it
// loads. A producer forgotten may write again from any sequence (its
// state starts anew), and a retry of one of its batches is no longer
// answered as a duplicate.
func (p *Partition) ExpireProducers(now time.Time) int {
	if p.cfg.ReadOnly {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.expireMuLocked(now)
}

// expireMuLocked is ExpireProducers. The caller holds mu.
func (p *Partition) expireMuLocked(now time.Time) int {
	limit := now.UnixMilli() - p.cfg.ProducerIDExpiration.Milliseconds()
	n := 0
	for id, e := range p.mu.producers.entries {
		if e.txnFirst < 0 && e.lastTimestamp <= limit {
			p.mu.producers.remove(id)
			n++
		}
	}
	return n
}
