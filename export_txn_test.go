package strata

import "github.com/stratalog/strata/partition"

// PartitionOf returns a partition of the store, of an internal topic too
// (a function, not a method, so that TestClosedStore's table of the
// Store's methods stays the API's).
func PartitionOf(s *Store, topicName string, part int) (*partition.Partition, error) {
	t, err := s.internalTopic(topicName)
	if err != nil {
		return nil, err
	}
	return t.Partition(part)
}

// TxnProducerOf returns the transaction's producer id and epoch.
func TxnProducerOf(t *Txn) (int64, int16) { return t.pid, t.epoch }

// TxnStatesRead reports whether the store has read its transactional ids'
// states (TransactionStateTopic), which a clean Open defers.
func TxnStatesRead(s *Store) bool { return s.txns.loaded.Load() }

// SetTxnLogSegmentBytes sets the segment size TransactionStateTopic is
// created with, before the store's first transaction, so that a test can
// have it roll and compact.
func SetTxnLogSegmentBytes(s *Store, n int64) { s.txns.logConfig.SegmentBytes = n }

// TxnEntries is how many transactional ids the coordinator holds an entry
// for, with a producer id or not.
func TxnEntries(s *Store) int {
	s.txns.mu.Lock()
	defer s.txns.mu.Unlock()
	return len(s.txns.ids)
}
