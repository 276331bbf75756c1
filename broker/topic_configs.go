package broker

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// errBadTopicConfig means a topic config a client sent has an unknown name
// or a value out of range (Kafka's INVALID_CONFIG).
var errBadTopicConfig = errors.New("broker: invalid topic config")

// topicConfigs maps Kafka's topic config names to the fields of
// strata.TopicConfig (Kafka's TopicConfig.java): each sets its field from
// the value, or fails.
var topicConfigs = map[string]func(c *strata.TopicConfig, v string) error{
	"cleanup.policy": func(c *strata.TopicConfig, v string) error {
		switch v {
		case "delete":
			c.CleanupPolicy = strata.CleanupDelete
		case "compact":
			c.CleanupPolicy = strata.CleanupCompact
		case "compact,delete", "delete,compact":
			c.CleanupPolicy = strata.CleanupCompactDelete
		default:
			return fmt.Errorf("not delete, compact or compact,delete")
		}
		return nil
	},
	"retention.ms":           msConfig(func(c *strata.TopicConfig) *time.Duration { return &c.Retention }),
	"segment.ms":             msConfig(func(c *strata.TopicConfig) *time.Duration { return &c.SegmentAge }),
	"delete.retention.ms":    msConfig(func(c *strata.TopicConfig) *time.Duration { return &c.DeleteRetention }),
	"min.compaction.lag.ms":  msConfig(func(c *strata.TopicConfig) *time.Duration { return &c.MinCompactionLag }),
	"max.compaction.lag.ms":  msConfig(func(c *strata.TopicConfig) *time.Duration { return &c.MaxCompactionLag }),
	"retention.bytes":        intConfig(func(c *strata.TopicConfig, n int64) { c.RetentionBytes = n }),
	"segment.bytes":          intConfig(func(c *strata.TopicConfig, n int64) { c.SegmentBytes = n }),
	"max.message.bytes":      intConfig(func(c *strata.TopicConfig, n int64) { c.MaxBatchBytes = clampInt(n) }),
	"index.interval.bytes":   intConfig(func(c *strata.TopicConfig, n int64) { c.IndexIntervalBytes = clampInt(n) }),
	"segment.index.bytes":    intConfig(func(c *strata.TopicConfig, n int64) { c.MaxIndexBytes = clampInt(n) }),
	"compression.gzip.level": intConfig(func(c *strata.TopicConfig, n int64) { c.CompressionLevel = clampInt(n) }),
	"compression.lz4.level":  intConfig(func(c *strata.TopicConfig, n int64) { c.CompressionLevel = clampInt(n) }),
	"compression.zstd.level": intConfig(func(c *strata.TopicConfig, n int64) { c.CompressionLevel = clampInt(n) }),
	"message.timestamp.type": func(c *strata.TopicConfig, v string) error {
		switch v {
		case "CreateTime":
			c.TimestampType = log.CreateTime
		case "LogAppendTime":
			c.TimestampType = log.LogAppendTime
		default:
			return fmt.Errorf("not CreateTime or LogAppendTime")
		}
		return nil
	},
	"compression.type": func(c *strata.TopicConfig, v string) error {
		c.Compression = strata.CompressionType(v)
		return nil // checked by WithDefaults
	},
	"min.cleanable.dirty.ratio": func(c *strata.TopicConfig, v string) error {
		r, err := strconv.ParseFloat(v, 64)
		c.MinCleanableDirtyRatio = r
		return err
	},
	"preallocate": func(c *strata.TopicConfig, v string) error {
		b, err := strconv.ParseBool(v)
		c.Preallocate = b
		return err
	},
}

// msConfig sets a duration from milliseconds (-1, forever, stays -1).
func msConfig(field func(c *strata.TopicConfig) *time.Duration) func(c *strata.TopicConfig, v string) error {
	return func(c *strata.TopicConfig, v string) error {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		d := time.Duration(ms) * time.Millisecond
		if ms == -1 {
			d = -1
		}
		*field(c) = d
		return nil
	}
}

// intConfig sets an integer field.
func intConfig(set func(c *strata.TopicConfig, n int64)) func(c *strata.TopicConfig, v string) error {
	return func(c *strata.TopicConfig, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		set(c, n)
		return nil
	}
}

// applyConfig sets one of Kafka's topic configs on c; a null value leaves
// the default.
func applyConfig(c *strata.TopicConfig, name string, value *string) error {
	set, ok := topicConfigs[name]
	if !ok {
		return fmt.Errorf("broker: topic config %q is not one Strata has: %w", name, errBadTopicConfig)
	}
	if value == nil {
		return nil
	}
	if err := set(c, *value); err != nil {
		return fmt.Errorf("broker: topic config %s=%q: %v: %w", name, *value, err, errBadTopicConfig)
	}
	return nil
}

// clampInt is n as an int field, clamped to int32's range so that
// WithDefaults refuses a value out of range rather than one wrapped.
func clampInt(n int64) int {
	return int(min(max(n, -1<<31), 1<<31-1))
}
