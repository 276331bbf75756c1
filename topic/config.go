package topic

import (
	"fmt"
	"math"
	"time"

	"github.com/stratalog/strata/compaction"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/partition"
)

// CleanupPolicy says how old records go: Kafka's cleanup.policy.
type CleanupPolicy string

// The cleanup policies.
const (
	CleanupDelete        CleanupPolicy = "delete"         // by retention time and size
	CleanupCompact       CleanupPolicy = "compact"        // keep the latest record per key
	CleanupCompactDelete CleanupPolicy = "compact,delete" // both
)

// Compacts reports whether the policy keeps the latest record per key
// (compact, or compact,delete).
func (p CleanupPolicy) Compacts() bool { return p == CleanupCompact || p == CleanupCompactDelete }

// Deletes reports whether the policy deletes by retention time and size
// (delete, or compact,delete).
func (p CleanupPolicy) Deletes() bool { return p == CleanupDelete || p == CleanupCompactDelete }

// CompressionType is Kafka's compression.type for a topic: "producer" (the
// default) keeps the codec each writer chose; a codec's name makes every
// batch written to the topic use that codec, a batch written in another
// being re-encoded, as a Kafka broker does.
type CompressionType string

// The compression types.
const (
	CompressionProducer CompressionType = "producer"
	CompressionNone     CompressionType = "none"
	CompressionGzip     CompressionType = "gzip"
	CompressionSnappy   CompressionType = "snappy"
	CompressionLZ4      CompressionType = "lz4"
	CompressionZstd     CompressionType = "zstd"
)

// Codec returns the codec t names, and false for producer (or an unknown
// type).
func (t CompressionType) Codec() (log.Compression, bool) {
	switch t {
	case CompressionNone:
		return log.None, true
	case CompressionGzip:
		return log.Gzip, true
	case CompressionSnappy:
		return log.Snappy, true
	case CompressionLZ4:
		return log.LZ4, true
	case CompressionZstd:
		return log.Zstd, true
	}
	return log.None, false
}

// ErrInvalidConfig means a topic configuration field is out of range. It
// is partition.ErrInvalidConfig: the fields a topic passes to its
// partitions are checked there, and match the one sentinel.
var ErrInvalidConfig = partition.ErrInvalidConfig

// Config is a topic's configuration. The zero value means the defaults,
// Kafka's where Kafka has one; Retention and RetentionBytes take -1 for
// "forever".
type Config struct {
	// Partitions is the number of partitions. Default 1.
	Partitions int `json:"partitions"`
	// Retention keeps records at least this long (record time). Default 7
	// days (Kafka's retention.ms); -1 keeps them forever.
	Retention time.Duration `json:"retention"`
	// RetentionBytes bounds each partition's size. Default -1, no bound
	// (Kafka's retention.bytes).
	RetentionBytes int64 `json:"retention_bytes"`
	// CleanupPolicy is delete (the default), compact, or both.
	CleanupPolicy CleanupPolicy `json:"cleanup_policy"`
	// SegmentBytes is the segment size. Default 1 GiB (segment.bytes).
	SegmentBytes int64 `json:"segment_bytes"`
	// SegmentAge rolls a segment this long (record time) after its first
	// batch. Default 7 days (segment.ms).
	SegmentAge time.Duration `json:"segment_age"`
	// MaxBatchBytes is the largest batch one append may write. Default 1 MiB
	// (max.message.bytes), or SegmentBytes if that is smaller.
	MaxBatchBytes int `json:"max_batch_bytes"`
	// TimestampType is CreateTime (default) or LogAppendTime.
	TimestampType log.TimestampType `json:"timestamp_type"`
	// Sync is the flush policy. The zero value means the store's policy
	// (Options.Sync, SyncEvery 1 s by default).
	Sync partition.SyncPolicy `json:"sync"`
	// IndexIntervalBytes spaces offset-index entries. Default 4096.
	IndexIntervalBytes int `json:"index_interval_bytes"`
	// MaxIndexBytes is the most bytes each index file may hold (Kafka's
	// segment.index.bytes). Default 10 MiB.
	MaxIndexBytes int `json:"max_index_bytes"`
	// MinCleanableDirtyRatio is the share of a compacted partition's bytes
	// written since its last cleaning that makes it due for cleaning.
	// Default 0.5 (min.cleanable.dirty.ratio).
	MinCleanableDirtyRatio float64 `json:"min_cleanable_dirty_ratio"`
	// DeleteRetention keeps a tombstone this long after the first cleaning
	// that copies it. Default 1 day (delete.retention.ms).
	DeleteRetention time.Duration `json:"delete_retention"`
	// MinCompactionLag leaves records this young uncompacted. Default 0.
	MinCompactionLag time.Duration `json:"min_compaction_lag"`
	// MaxCompactionLag makes a partition due for cleaning, whatever its
	// dirty ratio, once its oldest dirty record is this old. Default 0,
	// meaning never (max.compaction.lag.ms).
	MaxCompactionLag time.Duration `json:"max_compaction_lag"`
	// Compression is the topic's compression.type. Default producer: each
	// writer chooses (Append writes uncompressed, a Producer as its
	// options say, a batch appended as Kafka encoded it keeps its codec).
	Compression CompressionType `json:"compression,omitempty"`
	// CompressionLevel is the level of the topic's codec (KIP-390's
	// compression.gzip.level, compression.lz4.level, compression.zstd.level):
	// gzip 1–9, lz4 1–17, zstd -131072–22. Default 0: the codec's own
	// (gzip 6, lz4 9, zstd 3).
	CompressionLevel int `json:"compression_level,omitempty"`
	// Preallocate reserves SegmentBytes on disk for each new segment
	// (Kafka's preallocate); see partition.Config.Preallocate for what it
	// buys (little: small appends already reserve ahead). Default false.
	Preallocate bool `json:"preallocate"`
}

// Defaults of Config.
const (
	DefaultPartitions = 1
	DefaultRetention  = 7 * 24 * time.Hour
)

// WithDefaults returns c with its zero fields set to their defaults, or an
// error wrapping ErrInvalidConfig that names the field and its range.
func (c Config) WithDefaults() (Config, error) {
	if c.Partitions == 0 {
		c.Partitions = DefaultPartitions
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.RetentionBytes == 0 {
		c.RetentionBytes = -1
	}
	if c.CleanupPolicy == "" {
		c.CleanupPolicy = CleanupDelete
	}
	if c.Compression == "" {
		c.Compression = CompressionProducer
	}
	// The cleaner's defaults, so that the config describes the topic as it
	// runs (negative values pass, and the cleaner takes them as zero).
	if c.MinCleanableDirtyRatio == 0 {
		c.MinCleanableDirtyRatio = compaction.DefaultMinCleanableDirtyRatio
	}
	if c.DeleteRetention == 0 {
		c.DeleteRetention = compaction.DefaultDeleteRetention
	}
	switch {
	case c.Partitions < 1 || c.Partitions > MaxPartitions:
		return c, fmt.Errorf("topic: %d partitions out of range [1, %d]: %w", c.Partitions, MaxPartitions, ErrInvalidConfig)
	case c.Retention < 0 && c.Retention != -1:
		return c, fmt.Errorf("topic: retention %v is negative (use -1 for forever): %w", c.Retention, ErrInvalidConfig)
	case c.RetentionBytes < -1:
		return c, fmt.Errorf("topic: retention bytes %d below -1: %w", c.RetentionBytes, ErrInvalidConfig)
	case !c.CleanupPolicy.Compacts() && !c.CleanupPolicy.Deletes():
		return c, fmt.Errorf("topic: cleanup policy %q is not delete, compact or compact,delete: %w", c.CleanupPolicy, ErrInvalidConfig)
	case c.Compression != CompressionProducer && !knownCodec(c.Compression):
		return c, fmt.Errorf("topic: compression type %q is not producer, none, gzip, snappy, lz4 or zstd: %w", c.Compression, ErrInvalidConfig)
	case c.Compression == CompressionProducer && c.CompressionLevel != 0:
		return c, fmt.Errorf("topic: compression level %d without a codec (compression type producer): %w", c.CompressionLevel, ErrInvalidConfig)
	case math.IsNaN(c.MinCleanableDirtyRatio) || math.IsInf(c.MinCleanableDirtyRatio, 0) || c.MinCleanableDirtyRatio > 1:
		return c, fmt.Errorf("topic: min cleanable dirty ratio %v out of range [0, 1] (negative: 0): %w", c.MinCleanableDirtyRatio, ErrInvalidConfig)
	}
	if err := c.Sync.Validate(); err != nil {
		return c, err
	}
	pc, err := c.partitionConfig(partition.Config{}).Check()
	if err != nil {
		return c, err
	}
	// Fill the partition-level defaults in too, so the config describes
	// the topic as it runs. Sync stays zero: "the store's policy".
	c.SegmentBytes, c.SegmentAge, c.MaxBatchBytes = pc.SegmentBytes, pc.SegmentAge, pc.MaxBatchBytes
	c.IndexIntervalBytes, c.MaxIndexBytes = pc.IndexIntervalBytes, pc.MaxIndexBytes
	return c, nil
}

// MaxPartitions bounds a topic's partition count.
const MaxPartitions = 1 << 16

// partitionConfig is the configuration of the topic's partitions, on top of
// base (the clock and logger the store supplies).
func (c Config) partitionConfig(base partition.Config) partition.Config {
	base.SegmentBytes = c.SegmentBytes
	base.SegmentAge = c.SegmentAge
	base.MaxBatchBytes = c.MaxBatchBytes
	base.IndexIntervalBytes = c.IndexIntervalBytes
	base.MaxIndexBytes = c.MaxIndexBytes
	base.TimestampType = c.TimestampType
	base.Sync = c.Sync
	base.Preallocate = c.Preallocate
	base.Compacted = c.CleanupPolicy.Compacts()
	base.Compression, base.ForceCompression = c.Compression.Codec()
	base.CompressionLevel = c.CompressionLevel
	return base
}

// knownCodec reports whether t names a codec.
func knownCodec(t CompressionType) bool {
	_, ok := t.Codec()
	return ok
}
