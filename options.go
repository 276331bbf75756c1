package strata

import (
	"log/slog"
	"time"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/vfs"
)

// Options configure a Store. A nil *Options, and every zero field, means the
// default written on the field.
type Options struct {
	// Sync is the flush policy of topics that do not set their own, and
	// of the store's own files (topics.json, .clean-shutdown). Default
	// SyncEvery(time.Second). See Durability in the package documentation
	// and the README, which says which operations fsync under each policy.
	Sync SyncPolicy
	// Now is the clock used for record timestamps (CreateTime records
	// without one, LogAppendTime topics) and for retention. Default
	// time.Now; tests inject their own.
	Now func() time.Time
	// Logger receives recovery reports and background errors. Default
	// slog.Default().
	Logger *slog.Logger
	// SessionTimeout is how long a group consumer may go without polling
	// before it is evicted and its partitions reassigned (its later commits
	// are fenced). Default 45 s (Kafka's session.timeout.ms).
	SessionTimeout time.Duration
	// Assignor assigns partitions among a group's consumers:
	// RangeAssignor() (the default, as Kafka's), RoundRobinAssignor() or
	// StickyAssignor().
	Assignor Assignor
	// CleanerInterval is how often the store cleans the compacted topics
	// that are due (the internal __consumer_offsets included). Default 15 s
	// (Kafka's log.cleaner.backoff.ms); negative turns the background
	// cleaner off (Compact still works).
	CleanerInterval time.Duration
	// CleanerBufferBytes is the memory budget of one cleaning's offset map:
	// a partition with more distinct keys in its dirty section is cleaned
	// over several passes. Default 32 MiB.
	CleanerBufferBytes int
	// RetentionCheckInterval is how often the store applies retention in
	// the background. Default 5 minutes (Kafka's
	// log.retention.check.interval.ms); negative turns the background pass
	// off (EnforceRetention still works).
	RetentionCheckInterval time.Duration
	// TransactionalIDExpiration is how long a transactional id keeps its
	// state (its producer id and epoch) after its last transaction ended:
	// retention (EnforceRetention, and its background pass) forgets an id
	// idle for longer, with a tombstone in __transaction_state, and its
	// next BeginTxn starts it afresh with a new producer id. Default 7 days
	// (Kafka's transactional.id.expiration.ms); negative: never.
	TransactionalIDExpiration time.Duration
	// FS is the file system the store keeps its files on. Default (nil)
	// vfs.OS, the operating system's. A *vfs.Mem (vfs.NewMem()) keeps the
	// store in memory, for tests: the dir given to Open is then a path
	// inside that Mem, created there if needed, and the store's files
	// live as long as the Mem does, so a later Open of the same dir on
	// the same Mem finds them, and one Mem can hold several stores in
	// different directories. The directory lock (ErrLocked) is taken
	// only on vfs.OS and file systems wrapping it that say so (vfs.IsOS,
	// such as vfs.NoSync(vfs.OS)): on any other nothing stops two Stores
	// from opening one directory, which corrupts it. Crash tests use
	// vfs.Mem's Crash to see what a power cut would leave.
	FS vfs.FS
	// Isolation is the isolation level of the store's reads (Read, Fetch,
	// Records, Scan, Get, GetInto, ListOffsets, Lag) and of its consumers
	// that do not set their own: ReadUncommitted (the default, as Kafka's
	// isolation.level) or ReadCommitted. View reads at another level.
	Isolation Isolation
	// ReadOnly opens the directory for reading while another process (or
	// another Store of this one) may own it and write: Open takes no lock
	// and writes nothing — no recovery, no clean-shutdown marker, no
	// registry, index or checkpoint, no lock file, no directory (a missing
	// one is an error) — and starts no background work; Close writes
	// nothing either. Reads see what the owner has published and follow
	// it: new records and segments, retention, compaction, new and deleted
	// topics, config changes and the offsets committed to
	// __consumer_offsets (see RefreshInterval, and "Reading a live
	// directory" in the README for what is guaranteed). A read stops
	// quietly at a batch being written or a torn tail, and fails with
	// ErrCorrupt (file and position) at damage: bad bytes that a valid
	// batch follows, or that read the same for a second. Every call that
	// writes fails with ErrReadOnly and changes nothing. ReadCommitted
	// reads follow the owner's transactions: the first one of a partition
	// rebuilds its producer state (from the owner's latest producer
	// snapshot and the log after it), later ones follow it. Transactions
	// lists the transactional ids as they were at Open.
	ReadOnly bool
	// RefreshInterval is how often at most a ReadOnly store lists a
	// partition's directory and reads topics.json for changes, and how
	// often a read waiting for records (Fetch, Records, a Consumer's Poll)
	// looks again. A read of the end of a partition always looks for
	// batches appended to its active segment (one pread), unless another
	// read of the partition is looking at that moment. Default
	// DefaultRefreshInterval (100 ms). Ignored without ReadOnly.
	RefreshInterval time.Duration
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.FS == nil {
		out.FS = vfs.OS
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	if out.Logger == nil {
		out.Logger = slog.Default()
	}
	if out.RetentionCheckInterval == 0 {
		out.RetentionCheckInterval = DefaultRetentionCheckInterval
	}
	if out.CleanerInterval == 0 {
		out.CleanerInterval = DefaultCleanerInterval
	}
	if out.TransactionalIDExpiration == 0 {
		out.TransactionalIDExpiration = DefaultTransactionalIDExpiration
	}
	if out.Isolation == 0 {
		out.Isolation = ReadUncommitted
	}
	if out.RefreshInterval <= 0 {
		out.RefreshInterval = DefaultRefreshInterval
	}
	return out
}

// SyncPolicy is a flush policy: SyncAlways, SyncEvery(d) or SyncNever.
type SyncPolicy = partition.SyncPolicy

// The flush policies.
var (
	// SyncAlways: Append returns only after an fsync; concurrent appenders
	// share one (group commit).
	SyncAlways = partition.SyncAlways
	// SyncNever: nothing is ever fsynced, not at a roll, at Close, nor the
	// store's own files (topics.json, the checkpoints, the directories):
	// every write reaches the OS at once, so a crash of the process loses
	// nothing, but after a power loss or an OS crash the disk holds what
	// the kernel had written back. For tests and rebuildable data.
	SyncNever = partition.SyncNever
)

// SyncEvery fsyncs in the background every d: after a power loss, records
// older than d survive. SyncEvery(0) means the default, one second; a
// negative d is refused with ErrInvalidConfig by Open and CreateTopic.
func SyncEvery(d time.Duration) SyncPolicy { return partition.SyncEvery(d) }

// TopicConfig configures a topic (it is topic.Config, whose fields are
// documented there). A zero field means its default, Kafka's where Kafka
// has one; a field out of range makes CreateTopic fail with
// ErrInvalidConfig. The fields, with their default and valid range:
//
//   - Partitions: 1; 1 to 65536.
//   - Retention: 7 days (retention.ms), by record time; -1 forever.
//   - RetentionBytes: -1, no bound (retention.bytes), per partition; -1 or more.
//   - CleanupPolicy: CleanupDelete; CleanupCompact or CleanupCompactDelete
//     (cleanup.policy).
//   - SegmentBytes: 1 GiB (segment.bytes); 61 (one batch header) to 2^31-1.
//   - SegmentAge: 7 days (segment.ms), by record time; 0 or more.
//   - MaxBatchBytes: 1 MiB (max.message.bytes) or SegmentBytes if smaller;
//     61 to SegmentBytes.
//   - TimestampType: CreateTime; LogAppendTime (message.timestamp.type).
//   - Sync: the store's Options.Sync; a SyncPolicy that Validate accepts.
//   - IndexIntervalBytes: 4096 (index.interval.bytes); 0 or more.
//   - MaxIndexBytes: 10 MiB (segment.index.bytes); 24 or more.
//   - MinCleanableDirtyRatio: 0.5 (min.cleanable.dirty.ratio); at most 1,
//     a negative ratio counting as 0.
//   - DeleteRetention: 1 day (delete.retention.ms), how long a tombstone
//     stays after the first cleaning that copies it.
//   - MinCompactionLag: 0 (min.compaction.lag.ms); records younger stay
//     uncompacted.
//   - MaxCompactionLag: 0, never (max.compaction.lag.ms); a partition whose
//     oldest dirty record is older is due for cleaning.
//   - Compression: CompressionProducer, each writer's codec
//     (compression.type); CompressionNone, CompressionGzip,
//     CompressionSnappy, CompressionLZ4 or CompressionZstd.
//   - CompressionLevel: 0, the codec's own (gzip 6, lz4 9, zstd 3); gzip
//     1 to 9, lz4 1 to 17, zstd -131072 to 22 (KIP-390), only with a codec.
//   - Preallocate: false (preallocate); true reserves SegmentBytes on disk
//     for each new segment.
//
// WithDefaults returns the config with the defaults filled in, or the
// error CreateTopic would return.
type TopicConfig = topic.Config

// TimestampType is what a topic's record timestamps mean
// (TopicConfig.TimestampType, Kafka's message.timestamp.type): CreateTime,
// the default, or LogAppendTime.
type TimestampType = log.TimestampType

// The timestamp types.
const (
	// CreateTime: each record keeps the time its writer gave it (the
	// store's clock at Append when it has none).
	CreateTime = log.CreateTime
	// LogAppendTime: the store's clock when the batch was appended is the
	// timestamp of every record in it.
	LogAppendTime = log.LogAppendTime
)

// TopicID is a topic's id: 16 random bytes, printed as Kafka prints its
// topic ids (22 characters of URL-safe base64). A topic created again under
// the name of a deleted one gets a new id, and committed offsets carry the
// id of the topic they were committed for, so it never inherits the old
// topic's positions.
type TopicID = topic.ID

// CompressionType is Kafka's compression.type: for a topic
// (TopicConfig.Compression), CompressionProducer, the default, keeps each
// writer's choice, and a codec makes every batch of the topic use it; for
// a Producer (ProducerOptions.Compression), the codec it compresses with.
type CompressionType = topic.CompressionType

// The compression types.
const (
	CompressionProducer = topic.CompressionProducer
	CompressionNone     = topic.CompressionNone
	CompressionGzip     = topic.CompressionGzip
	CompressionSnappy   = topic.CompressionSnappy
	CompressionLZ4      = topic.CompressionLZ4
	CompressionZstd     = topic.CompressionZstd
)

// CleanupPolicy is how a topic's old records go: CleanupDelete,
// CleanupCompact or CleanupCompactDelete.
type CleanupPolicy = topic.CleanupPolicy

// The cleanup policies.
const (
	CleanupDelete        = topic.CleanupDelete
	CleanupCompact       = topic.CleanupCompact
	CleanupCompactDelete = topic.CleanupCompactDelete
)
