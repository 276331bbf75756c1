package compaction

import (
	"errors"
	"time"
)

// Defaults of Config's zero fields, Kafka's (LogConfig.java's
// DEFAULT_MIN_CLEANABLE_DIRTY_RATIO and DEFAULT_DELETE_RETENTION_MS) except
// BufferBytes.
const (
	DefaultMinCleanableDirtyRatio = 0.5
	DefaultDeleteRetention        = 24 * time.Hour
)

// Config is a compacted log's cleaning configuration. The zero value means
// the defaults.
type Config struct {
	// MinCleanableDirtyRatio is the share of the log's bytes that must be
	// dirty (written since the last cleaning) before Assess calls the log
	// cleanable. Default 0.5 (Kafka's min.cleanable.dirty.ratio); negative
	// means 0: any dirty byte will do.
	MinCleanableDirtyRatio float64
	// DeleteRetention is how long a tombstone stays after the first
	// cleaning that copies it: that cleaning stamps its batch with the
	// delete horizon now + DeleteRetention, and a later cleaning at or
	// after the horizon drops it (Kafka's delete.retention.ms, KIP-534).
	// Default 24 hours; negative means 0: the next cleaning drops it.
	DeleteRetention time.Duration
	// MinCompactionLag is how long a record stays uncompacted: a segment
	// holding a record younger than this is not cleaned, nor any after it.
	// Default 0 (Kafka's min.compaction.lag.ms).
	MinCompactionLag time.Duration
	// MaxCompactionLag makes a log cleanable whatever its dirty ratio once
	// its oldest dirty record is this old. Default 0, meaning forever
	// (Kafka's max.compaction.lag.ms, Long.MAX_VALUE).
	MaxCompactionLag time.Duration
	// BufferBytes is the memory budget of the offset map, see NewOffsetMap.
	// Default DefaultBufferBytes (32 MiB).
	BufferBytes int
	// DecompressLimit bounds what the records of one compressed batch may
	// decompress to when Clean rebuilds it (see log.Decoder): the
	// partition's own limit, so that the cleaner reads every batch the
	// partition took. Zero means log.DefaultDecompressLimit.
	DecompressLimit int
}

// withDefaults returns c with its zero fields set to their defaults and
// its negative ones to zero.
func (c Config) withDefaults() Config {
	switch {
	case c.MinCleanableDirtyRatio == 0:
		c.MinCleanableDirtyRatio = DefaultMinCleanableDirtyRatio
	case c.MinCleanableDirtyRatio < 0:
		c.MinCleanableDirtyRatio = 0
	}
	switch {
	case c.DeleteRetention == 0:
		c.DeleteRetention = DefaultDeleteRetention
	case c.DeleteRetention < 0:
		c.DeleteRetention = 0
	}
	c.MinCompactionLag = max(c.MinCompactionLag, 0)
	c.MaxCompactionLag = max(c.MaxCompactionLag, 0)
	if c.BufferBytes <= 0 {
		c.BufferBytes = DefaultBufferBytes
	}
	return c
}

// NewOffsetMap returns an empty offset map with the configured budget and
// xxhash64.
func (c Config) NewOffsetMap() *OffsetMap {
	return NewOffsetMap(c.withDefaults().BufferBytes, nil)
}

// Errors returned by this package. Match them with errors.Is; errors from
// the segments read and written wrap the segment package's own.
var (
	// ErrMapTooSmall means the offset map cannot hold even the first key of
	// the dirty section, so a cleaning would make no progress: give it a
	// larger budget.
	ErrMapTooSmall = errors.New("compaction: offset map too small for a single key")
	// ErrInvalid means the arguments do not describe a cleaning: no
	// segments, segments out of order, a missing map.
	ErrInvalid = errors.New("compaction: invalid arguments")
)
