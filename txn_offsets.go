package strata

import "github.com/stratalog/strata/partition"

// commitOffsetsLocked writes the offsets of t, by group, to
// __consumer_offsets as transactional batches of t's producer.
func (c *txnCoordinator) commitOffsetsLocked(t *Txn, offsets map[string]map[TopicPartition]OffsetAndMetadata) error {
	return nil
}

// endOffsets writes producer pid's marker to p, the partition of
// __consumer_offsets, applies it to the offsets its transaction committed
// there, and returns the marker's offset.
func (c *txnCoordinator) endOffsets(p *partition.Partition, pid int64, epoch int16, commit bool) (int64, error) {
	return p.WriteMarker(pid, epoch, commit, 0)
}
