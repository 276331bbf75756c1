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

// topicConfig is one of Kafka's topic configs that strata.TopicConfig has
// (Kafka's TopicConfig.java): how to set its field from a value, and how
// to write the field as one.
type topicConfig struct {
	name string
	set  func(c *strata.TopicConfig, v string) error
	get  func(c strata.TopicConfig) string
}

// levelConfigs are the per-codec compression levels (KIP-390), all one
// field in strata.TopicConfig: the one of the topic's codec applies.
var levelConfigs = map[string]strata.CompressionType{
	"compression.gzip.level": strata.CompressionGzip,
	"compression.lz4.level":  strata.CompressionLZ4,
	"compression.zstd.level": strata.CompressionZstd,
}

var topicConfigs = []topicConfig{
	{"cleanup.policy", func(c *strata.TopicConfig, v string) error {
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
	}, func(c strata.TopicConfig) string { return string(c.CleanupPolicy) }},
	msConfig("retention.ms", func(c *strata.TopicConfig) *time.Duration { return &c.Retention }),
	msConfig("segment.ms", func(c *strata.TopicConfig) *time.Duration { return &c.SegmentAge }),
	msConfig("delete.retention.ms", func(c *strata.TopicConfig) *time.Duration { return &c.DeleteRetention }),
	msConfig("min.compaction.lag.ms", func(c *strata.TopicConfig) *time.Duration { return &c.MinCompactionLag }),
	msConfig("max.compaction.lag.ms", func(c *strata.TopicConfig) *time.Duration { return &c.MaxCompactionLag }),
	intConfig("retention.bytes", func(c *strata.TopicConfig) *int64 { return &c.RetentionBytes }),
	intConfig("segment.bytes", func(c *strata.TopicConfig) *int64 { return &c.SegmentBytes }),
	smallIntConfig("max.message.bytes", func(c *strata.TopicConfig) *int { return &c.MaxBatchBytes }),
	smallIntConfig("index.interval.bytes", func(c *strata.TopicConfig) *int { return &c.IndexIntervalBytes }),
	smallIntConfig("segment.index.bytes", func(c *strata.TopicConfig) *int { return &c.MaxIndexBytes }),
	{"message.timestamp.type", func(c *strata.TopicConfig, v string) error {
		switch v {
		case "CreateTime":
			c.TimestampType = log.CreateTime
		case "LogAppendTime":
			c.TimestampType = log.LogAppendTime
		default:
			return fmt.Errorf("not CreateTime or LogAppendTime")
		}
		return nil
	}, func(c strata.TopicConfig) string { return c.TimestampType.String() }},
	{"compression.type", func(c *strata.TopicConfig, v string) error {
		c.Compression = strata.CompressionType(v)
		return nil // checked by WithDefaults
	}, func(c strata.TopicConfig) string { return string(c.Compression) }},
	{"min.cleanable.dirty.ratio", func(c *strata.TopicConfig, v string) error {
		r, err := strconv.ParseFloat(v, 64)
		c.MinCleanableDirtyRatio = r
		return err
	}, func(c strata.TopicConfig) string { return strconv.FormatFloat(c.MinCleanableDirtyRatio, 'g', -1, 64) }},
	{"preallocate", func(c *strata.TopicConfig, v string) error {
		b, err := strconv.ParseBool(v)
		c.Preallocate = b
		return err
	}, func(c strata.TopicConfig) string { return strconv.FormatBool(c.Preallocate) }},
}

// msConfig is a duration in milliseconds (-1, forever, stays -1).
func msConfig(name string, field func(c *strata.TopicConfig) *time.Duration) topicConfig {
	return topicConfig{name, func(c *strata.TopicConfig, v string) error {
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
	}, func(c strata.TopicConfig) string {
		d := *field(&c)
		if d < 0 {
			return "-1"
		}
		return strconv.FormatInt(d.Milliseconds(), 10)
	}}
}

func intConfig(name string, field func(c *strata.TopicConfig) *int64) topicConfig {
	return topicConfig{name, func(c *strata.TopicConfig, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		*field(c) = n
		return err
	}, func(c strata.TopicConfig) string { return strconv.FormatInt(*field(&c), 10) }}
}

// smallIntConfig is an int field of Kafka's int type, 32 bits.
func smallIntConfig(name string, field func(c *strata.TopicConfig) *int) topicConfig {
	return topicConfig{name, func(c *strata.TopicConfig, v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		*field(c) = int(n)
		return err
	}, func(c strata.TopicConfig) string { return strconv.Itoa(*field(&c)) }}
}

// findTopicConfig returns the config of a name, nil if Strata has none.
func findTopicConfig(name string) *topicConfig {
	for i := range topicConfigs {
		if topicConfigs[i].name == name {
			return &topicConfigs[i]
		}
	}
	return nil
}

// applyConfigs sets Kafka's topic configs on c (a null value leaves the
// default); a compression level applies when it is the one of the topic's
// codec.
func applyConfigs(c *strata.TopicConfig, names []string, values []*string) error {
	levels := map[strata.CompressionType]string{}
	for i, name := range names {
		value := values[i]
		if codec, ok := levelConfigs[name]; ok {
			if value != nil {
				levels[codec] = *value
			}
			continue
		}
		tc := findTopicConfig(name)
		if tc == nil {
			return fmt.Errorf("broker: topic config %q is not one Strata has: %w", name, errBadTopicConfig)
		}
		if value == nil {
			continue
		}
		if err := tc.set(c, *value); err != nil {
			return fmt.Errorf("broker: topic config %s=%q: %v: %w", name, *value, err, errBadTopicConfig)
		}
	}
	if v, ok := levels[c.Compression]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return fmt.Errorf("broker: topic config compression.%s.level=%q: %v: %w", c.Compression, v, err, errBadTopicConfig)
		}
		c.CompressionLevel = int(n)
	}
	return nil
}

// describeConfigs returns the topic configs of c, with defaults filled in,
// by name, and whether each is its default.
func describeConfigs(c strata.TopicConfig) (names, values []string, isDefault []bool) {
	def, _ := strata.TopicConfig{}.WithDefaults()
	for _, tc := range topicConfigs {
		v := tc.get(c)
		names, values, isDefault = append(names, tc.name), append(values, v), append(isDefault, v == tc.get(def))
	}
	for name, codec := range levelConfigs {
		if codec == c.Compression {
			names, values, isDefault = append(names, name), append(values, strconv.Itoa(c.CompressionLevel)), append(isDefault, c.CompressionLevel == 0)
		}
	}
	return names, values, isDefault
}
