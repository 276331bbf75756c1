package strata

import "fmt"

// commitOffsetsLocked writes the offsets of t, by group, to
// __consumer_offsets as transactional batches of t's producer.
func (c *txnCoordinator) commitOffsetsLocked(t *Txn, offsets map[string]map[TopicPartition]OffsetAndMetadata) error {
	if len(offsets) == 0 {
		return nil
	}
	return fmt.Errorf("strata: transactional offset commits: %w", ErrInvalidConfig)
}

// endOffsets writes producer pid's marker to __consumer_offsets and applies
// it to the offsets its transaction committed there.
func (c *txnCoordinator) endOffsets(pid int64, epoch int16, commit bool) error {
	return nil
}
