// Package topic maps records to the partitions of a topic the way Apache
// Kafka's Java producer does, so that a record keyed in Strata lands in the
// same partition as it would in Kafka.
//
// # Keyed records
//
// A record with a key goes to
//
//	ToPositive(Murmur2(key)) % numPartitions
//
// ([KeyPartition]). [Murmur2] is bit-identical to the Java client's
// Utils.murmur2, and [ToPositive] clears the sign bit (x & 0x7fffffff); it is
// not an absolute value. Ports that sign-extend bytes, use arithmetic right
// shifts, take abs or negate, or reduce modulo before masking pick different
// partitions for some keys.
//
// numPartitions is the topic's total partition count, not the number of
// partitions that happen to be available. A key therefore keeps its
// partition only while the partition count is unchanged: adding partitions
// moves most keys, and with them the per-key ordering guarantee.
//
// # Null is not empty
//
// As in Kafka, only a nil key means "no key". An empty, non-nil key
// ([]byte{}) is a key like any other: it is hashed (Murmur2 of no bytes is
// 275646681), so every record with an empty key lands in one partition
// (partition 681 of 1000).
// [KeyPartition] returns -1 for a nil key; callers route such records
// through a [StickyPartitioner] instead.
//
// # Records without a key
//
// [StickyPartitioner] follows KIP-480 (Kafka 2.4 to 3.2): all key-less
// records go to one randomly chosen partition until the caller starts a new
// batch, and then to a different partition chosen at random among the
// others. This fills batches instead of spreading single records over every
// partition, and over many batches still spreads the load evenly. The
// caller says when a batch ends: the root package's Store.Append after each
// call that used the sticky partition, its Producer when it sends a batch
// holding key-less records. Kafka 3.3+ (KIP-794) instead switches after
// batch.size bytes went to the sticky partition and weighs the next choice
// by each partition's queue depth; Strata keeps KIP-480's rule.
package topic
