package strata

import (
	"errors"

	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
)

// Errors returned by the store. Match them with errors.Is; the messages say
// which topic, partition or offset and the valid range.
var (
	// ErrLocked means another Store (in this process or another) has the
	// directory open.
	ErrLocked = errors.New("strata: directory is locked by another store")
	// ErrClosed means the store, or the partition an operation reached, was
	// closed. It is the partition package's sentinel, so that every closed
	// error the store passes on matches it.
	ErrClosed = partition.ErrClosed
	// ErrUnknownTopic means no topic has that name.
	ErrUnknownTopic = errors.New("strata: unknown topic")
	// ErrTopicExists means CreateTopic found a topic of that name.
	ErrTopicExists = errors.New("strata: topic already exists")
	// ErrReservedTopic means the name starts with "__", which is reserved
	// for internal topics.
	ErrReservedTopic = errors.New("strata: topic name reserved for internal topics")
	// ErrInvalidTopic means the name breaks Kafka's rule: 1 to 249
	// characters from [a-zA-Z0-9._-], not "." or "..".
	ErrInvalidTopic = topic.ErrInvalidName
	// ErrInvalidConfig means a configuration field is out of range.
	ErrInvalidConfig = topic.ErrInvalidConfig
	// ErrUnknownPartition means a partition number is out of the topic's
	// range.
	ErrUnknownPartition = topic.ErrNoPartition
	// ErrOffsetOutOfRange means an offset lies outside the partition's
	// [start, end] range.
	ErrOffsetOutOfRange = partition.ErrOutOfRange
	// ErrBatchTooLarge means the records for one partition encode to more
	// than the topic's MaxBatchBytes.
	ErrBatchTooLarge = partition.ErrBatchTooLarge
	// ErrNoRecords means Append was given no records.
	ErrNoRecords = partition.ErrEmptyBatch
	// ErrNoKey means a record without a key was appended to a compacted
	// topic, which Kafka refuses too.
	ErrNoKey = partition.ErrNoKey
	// ErrTimestampTooFarAhead means a CreateTime record is stamped more than
	// an hour ahead of the store's clock (Kafka 4.0's
	// message.timestamp.after.max.ms): such a record would hold back
	// time-based retention.
	ErrTimestampTooFarAhead = partition.ErrTimestampTooFarAhead
)
