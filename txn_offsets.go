package strata

import (
	"maps"
	"slices"

	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/partition"
)

// commitOffsetsLocked writes the offsets of t, by group, to
// __consumer_offsets as transactional batches of t's producer (one per
// group, in the order of their names): the group coordinator holds them
// pending until the transaction's marker there (endOffsets).
func (c *txnCoordinator) commitOffsetsLocked(t *Txn, offsets map[string]map[TopicPartition]OffsetAndMetadata) error {
	for _, g := range slices.Sorted(maps.Keys(offsets)) {
		if err := c.s.commitTxnOffsets(g, group.MemberRef{}, t.pid, t.epoch, offsets[g]); err != nil {
			return err
		}
	}
	return nil
}

// endOffsets writes producer pid's marker to p, the partition of
// __consumer_offsets, applies it to the offsets its transaction committed
// there, and returns the marker's offset.
func (c *txnCoordinator) endOffsets(_ *partition.Partition, pid int64, epoch int16, commit bool) (int64, error) {
	return c.s.endTxnOffsets(pid, epoch, commit)
}
