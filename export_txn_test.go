package strata

import "github.com/stratalog/strata/partition"

// PartitionOf returns a partition of the store, of an internal topic too.
func (s *Store) PartitionOf(topicName string, part int) (*partition.Partition, error) {
	t, err := s.internalTopic(topicName)
	if err != nil {
		return nil, err
	}
	return t.Partition(part)
}

// ProducerID returns the transaction's producer id and epoch.
func (t *Txn) ProducerID() (int64, int16) { return t.pid, t.epoch }
