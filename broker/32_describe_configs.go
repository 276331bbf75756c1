package broker

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/topic"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleDescribeConfigs describes topics' configs: those Strata has (see
// topic.KafkaConfigNames), with the defaults filled in (the names asked for, or
// all of them). A config whose value is the default's (Options.
// AutoCreateConfig's, the store's where that has none) has source
// DEFAULT_CONFIG, one set for the topic DYNAMIC_TOPIC_CONFIG; with
// IncludeSynonyms (v1+) each lists the topic's value and the broker
// config that is its default (log.retention.ms for retention.ms, as
// Kafka's synonyms go). The configs that cannot change on an existing
// topic (all but those retention and the cleaner read) are read-only.
// v3+ gives each config's type.
//
// The broker resource (its name "0", this broker, or "", the cluster
// default) lists the broker's own settings: read-only, with
// DEFAULT_CONFIG. Other resource types are INVALID_REQUEST.
func handleDescribeConfigs(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range req.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		fail := func(code int16, err error) {
			sr.ErrorCode = code
			msg := err.Error()
			sr.ErrorMessage = &msg
		}
		switch rr.ResourceType {
		case kmsg.ConfigResourceTypeBroker:
			if rr.ResourceName != "" && rr.ResourceName != "0" {
				fail(errInvalidRequest, fmt.Errorf("broker: broker %q: the one broker is 0", rr.ResourceName))
				break
			}
			sr.Configs = srv.brokerConfigEntries(rr.ConfigNames, req.Version)
		case kmsg.ConfigResourceTypeTopic:
			d, err := srv.store.DescribeTopic(rr.ResourceName)
			if err != nil {
				fail(codeOf(err), err)
				break
			}
			sr.Configs = srv.topicConfigEntries(d.Config, rr.ConfigNames, req.IncludeSynonyms, req.Version)
		default:
			fail(errInvalidRequest, fmt.Errorf("broker: resource type %v: Strata describes topics (2) and the broker (4)", rr.ResourceType))
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp, nil
}

// topicConfigEntries lists a topic's configs of the names asked for (all
// for none), sorted by name.
func (srv *Server) topicConfigEntries(c strata.TopicConfig, only []string, synonyms bool, version int16) []kmsg.DescribeConfigsResponseResourceConfig {
	def := srv.topicDefaults()
	if bySegment := srv.opts.AutoCreateConfig; bySegment.MaxBatchBytes == 0 {
		// max.message.bytes's default is at most the topic's segment.bytes.
		bySegment.SegmentBytes = c.SegmentBytes
		if d, err := bySegment.WithDefaults(); err == nil {
			def.MaxBatchBytes = d.MaxBatchBytes
		}
	}
	values, defaults := topic.KafkaConfigs(c), topic.KafkaConfigs(def)
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if len(only) > 0 && !slices.Contains(only, name) {
			continue
		}
		e := kmsg.NewDescribeConfigsResponseResourceConfig()
		e.Name = name
		v, def := values[name], defaults[name]
		if _, level := topic.IsKafkaLevelConfig(name); level {
			def = "0"
		}
		e.Value = &v
		e.ReadOnly = !topic.IsLiveKafkaConfig(name)
		e.IsDefault = v == def
		e.Source = kmsg.ConfigSourceDynamicTopicConfig
		if e.IsDefault {
			e.Source = kmsg.ConfigSourceDefaultConfig
		}
		info := configInfos[name]
		if version >= 3 {
			e.ConfigType = info.typ
		}
		if synonyms && version >= 1 {
			if !e.IsDefault {
				e.ConfigSynonyms = append(e.ConfigSynonyms, synonym(name, v, kmsg.ConfigSourceDynamicTopicConfig))
			}
			e.ConfigSynonyms = append(e.ConfigSynonyms, synonym(info.synonym, def, kmsg.ConfigSourceDefaultConfig))
		}
		out = append(out, e)
	}
	return out
}

func synonym(name, value string, source kmsg.ConfigSource) kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
	s.Name, s.Value, s.Source = name, &value, source
	return s
}

// brokerConfigEntries lists the broker's settings of the names asked for
// (all for none): the defaults of the topic configs under their broker
// names, and the broker's own.
func (srv *Server) brokerConfigEntries(only []string, version int16) []kmsg.DescribeConfigsResponseResourceConfig {
	def := srv.topicDefaults()
	values := map[string]string{
		"broker.id":                  "0",
		"node.id":                    "0",
		"num.partitions":             strconv.Itoa(def.Partitions),
		"default.replication.factor": "1",
		"min.insync.replicas":        "1",
		"auto.create.topics.enable":  strconv.FormatBool(srv.opts.AutoCreateTopics),
		"socket.request.max.bytes":   strconv.FormatInt(int64(srv.opts.MaxRequestBytes), 10),
		"connections.max.idle.ms":    strconv.FormatInt(srv.opts.IdleTimeout.Milliseconds(), 10),
	}
	types := map[string]kmsg.ConfigType{
		"broker.id": kmsg.ConfigTypeInt, "node.id": kmsg.ConfigTypeInt, "num.partitions": kmsg.ConfigTypeInt,
		"default.replication.factor": kmsg.ConfigTypeShort, "min.insync.replicas": kmsg.ConfigTypeInt,
		"auto.create.topics.enable": kmsg.ConfigTypeBoolean, "socket.request.max.bytes": kmsg.ConfigTypeInt,
		"connections.max.idle.ms": kmsg.ConfigTypeLong,
	}
	for name, v := range topic.KafkaConfigs(def) {
		if _, level := topic.IsKafkaLevelConfig(name); level {
			continue
		}
		info := configInfos[name]
		values[info.synonym], types[info.synonym] = v, info.typ
	}
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if len(only) > 0 && !slices.Contains(only, name) {
			continue
		}
		e := kmsg.NewDescribeConfigsResponseResourceConfig()
		v := values[name]
		e.Name, e.Value, e.ReadOnly, e.IsDefault = name, &v, true, true
		e.Source = kmsg.ConfigSourceDefaultConfig
		if version >= 3 {
			e.ConfigType = types[name]
		}
		out = append(out, e)
	}
	return out
}
