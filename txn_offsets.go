package strata

import (
	"fmt"
	"maps"
	"slices"
)

// commitOffsetsLocked writes the offsets of t, by group, to
// __consumer_offsets as transactional batches of t's producer (one per
// group and committing member, in the order of their names): the group
// coordinator holds them pending until the transaction's marker there
// (Store.endTxnOffsets). The offsets of a consumer (CommitConsumerOffsets) carry
// its member id and generation, which the group checks as it takes them,
// in the same step: a consumer fenced since fails the commit, which
// aborts the transaction.
func (c *txnCoordinator) commitOffsetsLocked(t *Txn, offsets map[string]map[TopicPartition]OffsetAndMetadata) error {
	for _, g := range slices.Sorted(maps.Keys(offsets)) {
		by := t.committers(g, offsets[g])
		for _, ref := range sortedRefs(by) {
			if err := c.s.commitTxnOffsets(g, ref, t.pid, t.epoch, by[ref]); err != nil {
				if fenced(err) {
					return fmt.Errorf("strata: transaction %q aborted: %w", t.id, err)
				}
				return err
			}
		}
	}
	return nil
}
