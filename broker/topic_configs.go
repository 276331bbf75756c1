package broker

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/topic"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// applyConfigs sets Kafka's topic configs on c (topic.SetKafkaConfigs;
// a null value leaves the default, its name still checked).
func applyConfigs(c *strata.TopicConfig, names []string, values []*string) error {
	var set, to []string
	for i, name := range names {
		if !topic.IsKafkaConfig(name) {
			return topic.SetKafkaConfig(c, name, "")
		}
		if values[i] != nil {
			set, to = append(set, name), append(to, *values[i])
		}
	}
	return topic.SetKafkaConfigs(c, set, to)
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
	defValues := topic.KafkaConfigs(def)
	cfg := old
	if replace {
		for _, name := range topic.LiveKafkaConfigNames() {
			if err := topic.SetKafkaConfig(&cfg, name, defValues[name]); err != nil {
				return old, err
			}
		}
	}
	for _, o := range ops {
		codec, isLevel := topic.IsKafkaLevelConfig(o.name)
		if !topic.IsKafkaConfig(o.name) {
			return old, fmt.Errorf("broker: topic config %q is not one Strata has (it has %s)", o.name, strings.Join(topic.KafkaConfigNames(), ", "))
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
			v, err := listOp(topic.KafkaConfigs(cfg)["cleanup.policy"], *value, o.op == kmsg.IncrementalAlterConfigOpAppend)
			if err != nil {
				return old, err
			}
			value = &v
		default:
			return old, refuse(errInvalidRequest, "broker: config operation %d for %s is not SET (0), DELETE (1), APPEND (2) or SUBTRACT (3)", o.op, o.name)
		}
		if isLevel && codec != cfg.Compression {
			continue // as at creation: a level applies to its own codec
		}
		if err := topic.SetKafkaConfig(&cfg, o.name, *value); err != nil {
			return old, err
		}
	}
	was, now := topic.KafkaConfigs(old), topic.KafkaConfigs(cfg)
	for _, name := range slices.Sorted(maps.Keys(now)) {
		if now[name] != was[name] && !topic.IsLiveKafkaConfig(name) {
			return old, fmt.Errorf("broker: topic config %s cannot change on an existing topic (%s to %s): Strata fixes it when the topic is created; these can change: %s",
				name, was[name], now[name], strings.Join(topic.LiveKafkaConfigNames(), ", "))
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
