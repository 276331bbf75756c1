package strata

import "fmt"

// PartitionFor returns the partition of topic that Append routes a record
// with key to: Kafka's default partitioner for keyed records,
// toPositive(murmur2(key)) % partitions (Utils.murmur2 and
// BuiltInPartitioner.partitionForKey in Kafka's clients), so a Kafka
// producer writing to a topic of the same partition count picks the same
// partition. An empty, non-nil key is a key like any other.
//
// A nil key is ErrNoKey: a record without a key goes to a sticky partition
// that moves from batch to batch (KIP-480), which no key names. An unknown
// topic is ErrUnknownTopic, an internal one (starting with "__")
// ErrReservedTopic; after Close, ErrClosed.
func (s *Store) PartitionFor(topicName string, key []byte) (_ int, err error) {
	defer wrapErr(&err)
	t, err := s.userTopic("route a key", topicName)
	if err != nil {
		return 0, err
	}
	if key == nil {
		return 0, fmt.Errorf("strata: a nil key has no partition of topic %q (records without a key go to a sticky partition; an empty key is a key): %w", topicName, ErrNoKey)
	}
	return t.Route(key), nil
}
