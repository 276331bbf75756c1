package topic

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stratalog/strata/log"
)

// kafkaConfig is one of Kafka's topic configs that Config has (Kafka's
// TopicConfig.java): how to set its field from a value, how to write the
// field as one, and what values it takes, for errors.
type kafkaConfig struct {
	name  string
	valid string
	set   func(c *Config, v string) error
	get   func(c Config) string
}

// levelConfigs are the per-codec compression levels (KIP-390), all one
// field of Config: the one of the topic's codec applies.
var levelConfigs = map[string]CompressionType{
	"compression.gzip.level": CompressionGzip,
	"compression.lz4.level":  CompressionLZ4,
	"compression.zstd.level": CompressionZstd,
}

var kafkaConfigs = []kafkaConfig{
	{"cleanup.policy", "delete, compact or compact,delete", func(c *Config, v string) error {
		switch v {
		case "delete":
			c.CleanupPolicy = CleanupDelete
		case "compact":
			c.CleanupPolicy = CleanupCompact
		case "compact,delete", "delete,compact":
			c.CleanupPolicy = CleanupCompactDelete
		default:
			return errBadValue
		}
		return nil
	}, func(c Config) string { return string(c.CleanupPolicy) }},
	msConfig("retention.ms", -1, true, func(c *Config) *time.Duration { return &c.Retention }),
	msConfig("segment.ms", 1, false, func(c *Config) *time.Duration { return &c.SegmentAge }),
	msConfig("delete.retention.ms", 0, true, func(c *Config) *time.Duration { return &c.DeleteRetention }),
	msConfig("min.compaction.lag.ms", 0, false, func(c *Config) *time.Duration { return &c.MinCompactionLag }),
	// 0 is none, strata's default; Kafka's is Long.MAX_VALUE, taken too.
	msConfig("max.compaction.lag.ms", 0, false, func(c *Config) *time.Duration { return &c.MaxCompactionLag }),
	// 0, keep nothing but the active segment, is Config's 1 (its 0 is the
	// default, no bound), which keeps the same.
	{"retention.bytes", "an integer number of bytes, at least -1 (-1: no bound)", func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil || n < -1:
			return errBadValue
		case n == 0:
			n = 1
		}
		c.RetentionBytes = n
		return nil
	}, func(c Config) string {
		if c.RetentionBytes == 1 {
			return "0"
		}
		return strconv.FormatInt(c.RetentionBytes, 10)
	}},
	{"segment.bytes", "an integer number of bytes", func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return errBadValue
		}
		c.SegmentBytes = n
		return nil
	}, func(c Config) string { return strconv.FormatInt(c.SegmentBytes, 10) }},
	intConfig("max.message.bytes", func(c *Config) *int { return &c.MaxBatchBytes }),
	intConfig("index.interval.bytes", func(c *Config) *int { return &c.IndexIntervalBytes }),
	intConfig("segment.index.bytes", func(c *Config) *int { return &c.MaxIndexBytes }),
	{"message.timestamp.type", "CreateTime or LogAppendTime", func(c *Config, v string) error {
		switch v {
		case "CreateTime":
			c.TimestampType = log.CreateTime
		case "LogAppendTime":
			c.TimestampType = log.LogAppendTime
		default:
			return errBadValue
		}
		return nil
	}, func(c Config) string { return c.TimestampType.String() }},
	{"compression.type", "producer, none, gzip, snappy, lz4 or zstd", func(c *Config, v string) error {
		t := CompressionType(v)
		if t != CompressionProducer && !knownCodec(t) {
			return errBadValue
		}
		c.Compression = t
		return nil
	}, func(c Config) string { return string(c.Compression) }},
	// Kafka's [0, 1]; 0, always due, is Config's negative ratio, as its 0
	// is the default.
	{"min.cleanable.dirty.ratio", "a number in [0, 1]", func(c *Config, v string) error {
		r, err := strconv.ParseFloat(v, 64)
		switch {
		case err != nil || math.IsNaN(r) || r < 0 || r > 1:
			return errBadValue
		case r == 0:
			r = -1
		}
		c.MinCleanableDirtyRatio = r
		return nil
	}, func(c Config) string {
		return strconv.FormatFloat(max(c.MinCleanableDirtyRatio, 0), 'g', -1, 64)
	}},
	{"preallocate", "true or false", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errBadValue
		}
		c.Preallocate = b
		return nil
	}, func(c Config) string { return strconv.FormatBool(c.Preallocate) }},
}

// errBadValue is a setter's way of saying that a value is not one its
// config takes; SetKafkaConfig's error says which values it takes.
var errBadValue = fmt.Errorf("bad value")

// msConfig is a duration in milliseconds, Kafka's long of at least least
// (its LogConfig's range): -1, forever, stays -1. A value longer than a
// time.Duration holds (about 292 years; Kafka's Long.MAX_VALUE, say) is
// the longest one, as good as forever. With zeroIsNothing, 0 is the
// shortest duration (1 ns), Kafka's 0, keep nothing, rather than Config's
// 0, the default.
func msConfig(name string, least int64, zeroIsNothing bool, field func(c *Config) *time.Duration) kafkaConfig {
	valid := fmt.Sprintf("an integer number of milliseconds, at least %d", least)
	if least < 0 {
		valid += " (-1: forever)"
	}
	return kafkaConfig{name, valid, func(c *Config, v string) error {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < least {
			return errBadValue
		}
		d := time.Duration(ms) * time.Millisecond
		switch {
		case ms == -1:
			d = -1
		case ms == 0 && zeroIsNothing:
			d = 1
		case ms > int64(math.MaxInt64/time.Millisecond):
			d = math.MaxInt64
		}
		*field(c) = d
		return nil
	}, func(c Config) string {
		d := *field(&c)
		if d < 0 {
			return "-1"
		}
		return strconv.FormatInt(d.Milliseconds(), 10)
	}}
}

// intConfig is an int field of Kafka's int type, 32 bits.
func intConfig(name string, field func(c *Config) *int) kafkaConfig {
	return kafkaConfig{name, "a 32-bit integer number of bytes", func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return errBadValue
		}
		*field(c) = int(n)
		return nil
	}, func(c Config) string { return strconv.Itoa(*field(&c)) }}
}

// findKafkaConfig returns the config of a name, nil if Config has none.
func findKafkaConfig(name string) *kafkaConfig {
	for i := range kafkaConfigs {
		if kafkaConfigs[i].name == name {
			return &kafkaConfigs[i]
		}
	}
	return nil
}

// KafkaConfigNames returns the names of Kafka's topic configs that Config
// has (Kafka's TopicConfig.java), sorted: those SetKafkaConfig takes and
// KafkaConfigs writes.
func KafkaConfigNames() []string {
	names := slices.Collect(maps.Keys(levelConfigs))
	for _, kc := range kafkaConfigs {
		names = append(names, kc.name)
	}
	slices.Sort(names)
	return names
}

// IsKafkaConfig reports whether name is one of KafkaConfigNames.
func IsKafkaConfig(name string) bool {
	_, level := levelConfigs[name]
	return level || findKafkaConfig(name) != nil
}

// SetKafkaConfig sets the field of c that Kafka's topic config name stands
// for from value, written as Kafka writes it: retention.ms=86400000,
// cleanup.policy=compact, retention.bytes=-1. Kafka's values that Config
// writes another way are translated: retention.ms=0 and
// delete.retention.ms=0, keep nothing, are the shortest duration (Config's
// 0 is the default); retention.bytes=0 is 1; min.cleanable.dirty.ratio=0
// is a negative ratio.
//
// Config has one compression level where Kafka has one per codec
// (compression.gzip.level, compression.lz4.level, compression.zstd.level,
// KIP-390): a level sets c.CompressionLevel when c.Compression is its
// codec, and is otherwise checked and kept nowhere, as a Kafka topic's
// level of a codec it does not use has no effect. Set compression.type
// first, or use SetKafkaConfigs.
//
// An unknown name, or a value the config does not take, is an error
// wrapping ErrInvalidConfig that names the config and the values it takes,
// and changes nothing. Ranges that depend on other fields (segment.bytes
// and max.message.bytes) are Config.WithDefaults' to check.
func SetKafkaConfig(c *Config, name, value string) error {
	if codec, ok := levelConfigs[name]; ok {
		n, err := strconv.ParseInt(value, 10, 32)
		if err != nil {
			return fmt.Errorf("topic: config %s=%q is not an integer: %w", name, value, ErrInvalidConfig)
		}
		lc, _ := codec.Codec()
		if err := log.CheckConfigLevel(lc, int(n), ErrInvalidConfig); err != nil {
			return fmt.Errorf("topic: config %s=%q: %w", name, value, err)
		}
		if c.Compression == codec {
			c.CompressionLevel = int(n)
		}
		return nil
	}
	kc := findKafkaConfig(name)
	if kc == nil {
		return fmt.Errorf("topic: config %q is not one Strata has (it has %s): %w", name, strings.Join(KafkaConfigNames(), ", "), ErrInvalidConfig)
	}
	next := *c
	if err := kc.set(&next, value); err != nil {
		return fmt.Errorf("topic: config %s=%q: the values are %s: %w", name, value, kc.valid, ErrInvalidConfig)
	}
	*c = next
	return nil
}

// SetKafkaConfigs sets Kafka's topic configs names[i]=values[i] on c, as
// SetKafkaConfig does, the compression levels after the others, so that a
// level applies whatever the order compression.type and it are given in.
// On an error c is as it was.
func SetKafkaConfigs(c *Config, names, values []string) error {
	if len(names) != len(values) {
		return fmt.Errorf("topic: %d config names for %d values: %w", len(names), len(values), ErrInvalidConfig)
	}
	next := *c
	for _, levels := range []bool{false, true} {
		for i, name := range names {
			if _, level := levelConfigs[name]; level != levels {
				continue
			}
			if err := SetKafkaConfig(&next, name, values[i]); err != nil {
				return err
			}
		}
	}
	*c = next
	return nil
}

// KafkaConfigs returns c's configs by Kafka's names, with the values as
// Kafka writes them (see SetKafkaConfig): every one of KafkaConfigNames but
// the compression levels of the codecs c does not use. Fill c's defaults
// in first (WithDefaults) for the values the topic runs with.
func KafkaConfigs(c Config) map[string]string {
	out := make(map[string]string, len(kafkaConfigs)+1)
	for _, kc := range kafkaConfigs {
		out[kc.name] = kc.get(c)
	}
	for name, codec := range levelConfigs {
		if codec == c.Compression {
			out[name] = strconv.Itoa(c.CompressionLevel)
		}
	}
	return out
}

// IsKafkaLevelConfig reports whether name is one of the per-codec
// compression levels (compression.gzip.level, compression.lz4.level,
// compression.zstd.level), and returns its codec.
func IsKafkaLevelConfig(name string) (CompressionType, bool) {
	codec, ok := levelConfigs[name]
	return codec, ok
}

// liveKafkaConfigs are the Kafka names of the fields CheckChange lets an
// open topic change: those retention and the cleaner read.
var liveKafkaConfigs = []string{"delete.retention.ms", "max.compaction.lag.ms", "min.cleanable.dirty.ratio", "min.compaction.lag.ms", "retention.bytes", "retention.ms"}

// LiveKafkaConfigNames returns, sorted, the names of Kafka's topic configs
// that may change on an existing topic (CheckChange): Kafka's dynamic
// topic configs that Strata applies to a topic it has opened. The others
// are fixed when the topic is created.
func LiveKafkaConfigNames() []string { return slices.Clone(liveKafkaConfigs) }

// IsLiveKafkaConfig reports whether name is one of LiveKafkaConfigNames.
func IsLiveKafkaConfig(name string) bool { return slices.Contains(liveKafkaConfigs, name) }
