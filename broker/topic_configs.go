package broker

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/topic"
	"github.com/twmb/franz-go/pkg/kmsg"
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
	msConfig("retention.ms", -1, true, func(c *strata.TopicConfig) *time.Duration { return &c.Retention }),
	msConfig("segment.ms", 1, false, func(c *strata.TopicConfig) *time.Duration { return &c.SegmentAge }),
	msConfig("delete.retention.ms", 0, true, func(c *strata.TopicConfig) *time.Duration { return &c.DeleteRetention }),
	msConfig("min.compaction.lag.ms", 0, false, func(c *strata.TopicConfig) *time.Duration { return &c.MinCompactionLag }),
	// 0 is none, strata's default; Kafka's is Long.MAX_VALUE, taken too.
	msConfig("max.compaction.lag.ms", 0, false, func(c *strata.TopicConfig) *time.Duration { return &c.MaxCompactionLag }),
	// 0, keep nothing but the active segment, is the store's 1 (its 0 is
	// the default, no bound), which keeps the same.
	{"retention.bytes", func(c *strata.TopicConfig, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if n == 0 {
			n = 1
		}
		c.RetentionBytes = n
		return err
	}, func(c strata.TopicConfig) string {
		if c.RetentionBytes == 1 {
			return "0"
		}
		return strconv.FormatInt(c.RetentionBytes, 10)
	}},
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
	// Kafka's [0, 1]; 0, always due, is strata's negative ratio, as its 0
	// is the default.
	{"min.cleanable.dirty.ratio", func(c *strata.TopicConfig, v string) error {
		r, err := strconv.ParseFloat(v, 64)
		switch {
		case err != nil:
			return err
		case r < 0:
			return fmt.Errorf("%v is below 0", r)
		case r == 0:
			r = -1
		}
		c.MinCleanableDirtyRatio = r
		return nil
	}, func(c strata.TopicConfig) string {
		return strconv.FormatFloat(max(c.MinCleanableDirtyRatio, 0), 'g', -1, 64)
	}},
	{"preallocate", func(c *strata.TopicConfig, v string) error {
		b, err := strconv.ParseBool(v)
		c.Preallocate = b
		return err
	}, func(c strata.TopicConfig) string { return strconv.FormatBool(c.Preallocate) }},
}

// msConfig is a duration in milliseconds, Kafka's long of at least least
// (its LogConfig's range): -1, forever, stays -1. A value longer than a
// time.Duration holds (about 292 years; Kafka's Long.MAX_VALUE, say) is
// the longest one, as good as forever. With zeroIsNothing, 0 is the
// shortest duration (1 ns), Kafka's 0, keep nothing, rather than
// strata's 0, the default.
func msConfig(name string, least int64, zeroIsNothing bool, field func(c *strata.TopicConfig) *time.Duration) topicConfig {
	return topicConfig{name, func(c *strata.TopicConfig, v string) error {
		ms, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil:
			return err
		case ms < least:
			return fmt.Errorf("%d is below %d", ms, least)
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

// configInfo is what DescribeConfigs says of a topic config beyond its
// value: its type and the broker config that is its default (Kafka's
// LogConfig synonyms; ServerTopicConfigSynonyms.java).
type configInfo struct {
	typ     kmsg.ConfigType
	synonym string
}

var configInfos = map[string]configInfo{
	"cleanup.policy":            {kmsg.ConfigTypeList, "log.cleanup.policy"},
	"retention.ms":              {kmsg.ConfigTypeLong, "log.retention.ms"},
	"segment.ms":                {kmsg.ConfigTypeLong, "log.roll.ms"},
	"delete.retention.ms":       {kmsg.ConfigTypeLong, "log.cleaner.delete.retention.ms"},
	"min.compaction.lag.ms":     {kmsg.ConfigTypeLong, "log.cleaner.min.compaction.lag.ms"},
	"max.compaction.lag.ms":     {kmsg.ConfigTypeLong, "log.cleaner.max.compaction.lag.ms"},
	"retention.bytes":           {kmsg.ConfigTypeLong, "log.retention.bytes"},
	"segment.bytes":             {kmsg.ConfigTypeInt, "log.segment.bytes"},
	"max.message.bytes":         {kmsg.ConfigTypeInt, "message.max.bytes"},
	"index.interval.bytes":      {kmsg.ConfigTypeInt, "log.index.interval.bytes"},
	"segment.index.bytes":       {kmsg.ConfigTypeInt, "log.index.size.max.bytes"},
	"message.timestamp.type":    {kmsg.ConfigTypeString, "log.message.timestamp.type"},
	"compression.type":          {kmsg.ConfigTypeString, "compression.type"},
	"min.cleanable.dirty.ratio": {kmsg.ConfigTypeDouble, "log.cleaner.min.cleanable.ratio"},
	"preallocate":               {kmsg.ConfigTypeBoolean, "log.preallocate"},
	"compression.gzip.level":    {kmsg.ConfigTypeInt, "compression.gzip.level"},
	"compression.lz4.level":     {kmsg.ConfigTypeInt, "compression.lz4.level"},
	"compression.zstd.level":    {kmsg.ConfigTypeInt, "compression.zstd.level"},
}

// liveConfigs are the topic configs that may change on an existing topic
// (Store.AlterTopicConfig): those retention and the cleaner read. The
// others are the partitions' own, fixed when the topic is created.
var liveConfigs = []string{"retention.ms", "retention.bytes", "delete.retention.ms", "min.compaction.lag.ms", "max.compaction.lag.ms", "min.cleanable.dirty.ratio"}

// isLive reports whether a topic config may change on an existing topic.
func isLive(name string) bool { return slices.Contains(liveConfigs, name) }

// topicDefaults is the config a topic created without configs gets:
// Options.AutoCreateConfig with the store's defaults filled in (the
// broker's defaults, in Kafka's terms).
func (srv *Server) topicDefaults() strata.TopicConfig {
	def, err := srv.opts.AutoCreateConfig.WithDefaults()
	if err != nil {
		def, _ = strata.TopicConfig{}.WithDefaults()
	}
	return def
}

// configValues returns the topic configs of c, defaults filled in, by
// name: those of topicConfigs, and the compression level of c's codec if
// it has one.
func configValues(c strata.TopicConfig) map[string]string {
	out := make(map[string]string, len(topicConfigs)+1)
	for _, tc := range topicConfigs {
		out[tc.name] = tc.get(c)
	}
	for name, codec := range levelConfigs {
		if codec == c.Compression {
			out[name] = strconv.Itoa(c.CompressionLevel)
		}
	}
	return out
}

// configOp is one change of a topic config a client asked for: SET (to
// value), DELETE (back to the default), APPEND or SUBTRACT (list configs:
// cleanup.policy).
type configOp struct {
	name  string
	op    kmsg.IncrementalAlterConfigOp
	value *string
}

// alterError is a config change refused with a Kafka error code.
type alterError struct {
	code int16
	msg  string
}

func (e *alterError) Error() string { return e.msg }

func refuse(code int16, format string, args ...any) error {
	return &alterError{code, fmt.Sprintf(format, args...)}
}

// alterTopic applies ops to topic name's config (with replace, as
// AlterConfigs does, the live configs not named go back to their
// defaults first) and, unless validateOnly, stores it with
// Store.AlterTopicConfig. It returns the error code and the error.
func (srv *Server) alterTopic(name string, ops []configOp, replace, validateOnly bool) (int16, error) {
	if topic.IsInternal(name) {
		err := fmt.Errorf("broker: topic %q is the store's own: %w", name, strata.ErrReservedTopic)
		return codeOf(err), err
	}
	// Two clients' changes of one topic at once: each applies its ops
	// to the config the other left, so that neither undoes the other's.
	srv.alterMu.Lock()
	defer srv.alterMu.Unlock()
	d, err := srv.store.DescribeTopic(name)
	if err != nil {
		return codeOf(err), err
	}
	cfg, err := srv.changedConfig(d.Config, ops, replace)
	if err != nil {
		var ae *alterError
		if errors.As(err, &ae) {
			return ae.code, err
		}
		return errInvalidConfig, err
	}
	// The count is CreatePartitions', which may have grown the topic
	// since DescribeTopic: zero keeps whatever it is.
	cfg.Partitions = 0
	if validateOnly {
		_, err = topic.CheckChange(d.Config, cfg)
	} else {
		err = srv.store.AlterTopicConfig(name, cfg)
	}
	switch {
	case err == nil:
		return errNone, nil
	case errors.Is(err, strata.ErrInvalidConfig):
		return errInvalidConfig, err
	}
	return codeOf(err), err
}

// changedConfig returns old with ops applied, or why not: a config Strata
// does not have, a bad value, an op its config does not take, or a change
// to a config that cannot change on an existing topic.
func (srv *Server) changedConfig(old strata.TopicConfig, ops []configOp, replace bool) (strata.TopicConfig, error) {
	seen := map[string]bool{}
	for _, o := range ops {
		if seen[o.name] {
			return old, refuse(errInvalidRequest, "broker: config %q is named twice", o.name)
		}
		seen[o.name] = true
	}
	def := srv.topicDefaults()
	defValues := configValues(def)
	cfg := old
	if replace {
		for _, name := range liveConfigs {
			if err := findTopicConfig(name).set(&cfg, defValues[name]); err != nil {
				return old, err
			}
		}
	}
	for _, o := range ops {
		codec, isLevel := levelConfigs[o.name]
		tc := findTopicConfig(o.name)
		if tc == nil && !isLevel {
			return old, fmt.Errorf("broker: topic config %q is not one Strata has (it has %s)", o.name, strings.Join(topicConfigNames(), ", "))
		}
		value := o.value
		switch o.op {
		case kmsg.IncrementalAlterConfigOpSet:
			if value == nil {
				return old, refuse(errInvalidRequest, "broker: a null value for %s: set a value, or delete the config to go back to its default", o.name)
			}
		case kmsg.IncrementalAlterConfigOpDelete:
			v := defValues[o.name]
			if isLevel {
				v = "0"
			}
			value = &v
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if o.name != "cleanup.policy" {
				return old, fmt.Errorf("broker: %s of %s: only a list config (cleanup.policy) takes APPEND and SUBTRACT", o.op, o.name)
			}
			if value == nil {
				return old, refuse(errInvalidRequest, "broker: a null value to %s for %s", o.op, o.name)
			}
			v, err := listOp(tc.get(cfg), *value, o.op == kmsg.IncrementalAlterConfigOpAppend)
			if err != nil {
				return old, err
			}
			value = &v
		default:
			return old, refuse(errInvalidRequest, "broker: config operation %d for %s is not SET (0), DELETE (1), APPEND (2) or SUBTRACT (3)", o.op, o.name)
		}
		if isLevel {
			if codec != cfg.Compression {
				continue // as at creation: a level applies to its own codec
			}
			n, err := strconv.ParseInt(*value, 10, 32)
			if err != nil {
				return old, fmt.Errorf("broker: topic config %s=%q: %v", o.name, *value, err)
			}
			cfg.CompressionLevel = int(n)
			continue
		}
		if err := tc.set(&cfg, *value); err != nil {
			return old, fmt.Errorf("broker: topic config %s=%q: %v", o.name, *value, err)
		}
	}
	was, now := configValues(old), configValues(cfg)
	for _, name := range slices.Sorted(maps.Keys(now)) {
		if now[name] != was[name] && !isLive(name) {
			return old, fmt.Errorf("broker: topic config %s cannot change on an existing topic (%s to %s): Strata fixes it when the topic is created; these can change: %s",
				name, was[name], now[name], strings.Join(liveConfigs, ", "))
		}
	}
	return cfg, nil
}

// listOp appends to or subtracts from the comma-separated list cur the
// items of arg, for cleanup.policy, keeping Kafka's order of its values.
func listOp(cur, arg string, add bool) (string, error) {
	items := map[string]bool{}
	for _, it := range strings.Split(cur, ",") {
		items[strings.TrimSpace(it)] = true
	}
	for _, it := range strings.Split(arg, ",") {
		it = strings.TrimSpace(it)
		if it != "compact" && it != "delete" {
			return "", fmt.Errorf("broker: cleanup.policy item %q is not compact or delete", it)
		}
		items[it] = add
	}
	var out []string
	for _, it := range []string{"compact", "delete"} {
		if items[it] {
			out = append(out, it)
		}
	}
	if len(out) == 0 {
		return "", fmt.Errorf("broker: cleanup.policy would be empty: it needs compact, delete or both")
	}
	return strings.Join(out, ","), nil
}

// topicConfigNames lists the names of the topic configs Strata has.
func topicConfigNames() []string {
	var names []string
	for _, tc := range topicConfigs {
		names = append(names, tc.name)
	}
	return append(names, slices.Sorted(maps.Keys(levelConfigs))...)
}
