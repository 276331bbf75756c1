package strata

import (
	"errors"
	"syscall"

	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/log"
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
	// ErrReadOnly means a call that writes reached a store opened with
	// Options.ReadOnly (or one of its partitions); it changed nothing. It
	// is the partition package's sentinel, so that every such error the
	// store passes on matches it.
	ErrReadOnly = partition.ErrReadOnly
	// ErrUnknownTopic means no topic has that name.
	ErrUnknownTopic = errors.New("strata: unknown topic")
	// ErrTopicExists means CreateTopic found a topic of that name.
	ErrTopicExists = errors.New("strata: topic already exists")
	// ErrTopicConfigMismatch means EnsureTopic found a topic of that name
	// whose partition count or cleanup policy differs from the one wanted;
	// the message says which, wanted and actual.
	ErrTopicConfigMismatch = errors.New("strata: topic exists with another config")
	// ErrReservedTopic means the name starts with "__", which is reserved
	// for internal topics. Every call that names a topic refuses such a
	// name, reads included: the store's __consumer_offsets is its own,
	// read through Committed and Lag; only DescribeTopic and Compact,
	// which look after it, take its name (Stats lists it).
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
	// [start, end] range (for Get, outside [start, end): the end offset
	// holds no record yet).
	ErrOffsetOutOfRange = partition.ErrOutOfRange
	// ErrNoRecord means Get was given an offset in range that holds no
	// record: compaction removed it, or a transaction's marker takes it.
	ErrNoRecord = partition.ErrNoRecord
	// ErrBatchTooLarge means the records for one partition encode to more
	// than the topic's MaxBatchBytes.
	ErrBatchTooLarge = partition.ErrBatchTooLarge
	// ErrNoRecords means Append was given no records.
	ErrNoRecords = partition.ErrEmptyBatch
	// ErrNoKey means a key was needed and none given: a record without a
	// key appended to a compacted topic, which Kafka refuses too, or a nil
	// key given to PartitionFor.
	ErrNoKey = partition.ErrNoKey
	// ErrTimestampTooFarAhead means a CreateTime record is stamped more than
	// an hour ahead of the store's clock (Kafka 4.0's
	// message.timestamp.after.max.ms): such a record would hold back
	// time-based retention.
	ErrTimestampTooFarAhead = partition.ErrTimestampTooFarAhead
	// ErrCorrupt means data on disk is damaged: a batch whose CRC or
	// structure is wrong, a damaged segment or index file, a checkpoint or
	// topics.json that does not hold what it should. The error names the
	// file and, for segments, the byte position. Reads return the intact
	// records before a damaged batch and this error when they reach it.
	ErrCorrupt = log.ErrCorrupt
	// ErrUnsupportedFormat means a read reached a message of Kafka's
	// formats before RecordBatch v2 (magic 0 or 1): valid data, kept and
	// checked by the store, whose records this version does not read. The
	// records after it stay reachable by offset.
	ErrUnsupportedFormat = log.ErrUnsupportedFormat
	// ErrUnsupportedCompression means a read reached a batch Strata cannot
	// decompress though its CRC is right: a codec Kafka does not have (an
	// attribute value of 5 to 7), or an LZ4 frame with dependent blocks
	// (which Kafka refuses too). The batch is kept; the records after it
	// stay reachable by offset.
	ErrUnsupportedCompression = log.ErrUnsupportedCompression
	// ErrDecompressedTooLarge means a read reached a compressed batch whose
	// records decompress to more than the partition's limit (64 MiB, or
	// 64 × the topic's MaxBatchBytes when that is more, at most 1 GiB), so
	// that a hostile batch cannot make a reader allocate without bound.
	ErrDecompressedTooLarge = log.ErrTooLarge
	// ErrDiskFull means the file system is full (ENOSPC). A failed write
	// changes nothing: free space and try again.
	ErrDiskFull error = syscall.ENOSPC
	// ErrInvalidGroup means a group id is empty or longer than 32767 bytes.
	ErrInvalidGroup = group.ErrInvalidGroup
	// ErrMetadataTooLarge means a commit's metadata is longer than 4096
	// bytes (Kafka's offset.metadata.max.bytes).
	ErrMetadataTooLarge = group.ErrMetadataTooLarge
	// ErrNotOwner means a consumer committed offsets of a partition the
	// group has not assigned to it.
	ErrNotOwner = group.ErrNotOwner
)

// ErrNotCompacted means Compact was asked to clean a topic whose cleanup
// policy does not compact (CleanupDelete).
var ErrNotCompacted = errors.New("strata: topic is not compacted")
