package broker

import (
	"errors"
	"fmt"

	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleCreateTopics creates each topic with Store.CreateTopic: its
// partitions (-1 for the default of Options.AutoCreateConfig), a
// replication factor of -1 or 1 (the one broker), no manual replica
// assignment, and the configs Strata has (topic.KafkaConfigNames; any other is
// INVALID_CONFIG). ValidateOnly checks without creating. Each topic gets
// its own error code and message; from v5, a topic created (or checked)
// gets its configs as DescribeConfigs gives them.
func handleCreateTopics(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = rt.Topic
		st.NumPartitions, st.ReplicationFactor = -1, -1
		cfg, code, err := srv.createTopic(rt, req.ValidateOnly)
		if err != nil {
			st.ErrorCode = code
			msg := err.Error()
			st.ErrorMessage = &msg
		} else {
			st.NumPartitions, st.ReplicationFactor = int32(cfg.Partitions), 1
			if req.Version >= 5 {
				for _, e := range srv.topicConfigEntries(cfg, nil, false, 0) {
					c := kmsg.NewCreateTopicsResponseTopicConfig()
					c.Name, c.Value, c.ReadOnly, c.Source = e.Name, e.Value, e.ReadOnly, int8(e.Source)
					st.Configs = append(st.Configs, c)
				}
			}
			if d, err := srv.store.DescribeTopic(rt.Topic); err == nil {
				st.TopicID = [16]byte(d.ID)
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// createTopic creates (or with validateOnly checks) one topic and returns
// its config with the defaults filled in, or the error code and error.
func (srv *Server) createTopic(rt kmsg.CreateTopicsRequestTopic, validateOnly bool) (strata.TopicConfig, int16, error) {
	cfg := srv.opts.AutoCreateConfig
	switch {
	case rt.NumPartitions == 0 || rt.NumPartitions < -1:
		return cfg, errInvalidPartitions, fmt.Errorf("broker: %d partitions: at least 1, or -1 for the default", rt.NumPartitions)
	case rt.ReplicationFactor != -1 && rt.ReplicationFactor != 1:
		return cfg, errInvalidReplicationFactor, fmt.Errorf("broker: replication factor %d: one broker, so 1 (or -1 for the default)", rt.ReplicationFactor)
	case len(rt.ReplicaAssignment) > 0:
		return cfg, errInvalidReplicaAssignment, fmt.Errorf("broker: manual replica assignment: one broker holds every partition")
	}
	if rt.NumPartitions > 0 {
		cfg.Partitions = int(rt.NumPartitions)
	}
	names, values := make([]string, len(rt.Configs)), make([]*string, len(rt.Configs))
	for i, c := range rt.Configs {
		names[i], values[i] = c.Name, c.Value
	}
	if err := applyConfigs(&cfg, names, values); err != nil {
		return cfg, errInvalidConfig, err
	}
	full, err := cfg.WithDefaults()
	if err != nil {
		return cfg, errInvalidConfig, err
	}
	if validateOnly {
		if _, err := srv.store.DescribeTopic(rt.Topic); err == nil {
			return full, errTopicAlreadyExists, fmt.Errorf("broker: topic %q: %w", rt.Topic, strata.ErrTopicExists)
		} else if !errors.Is(err, strata.ErrUnknownTopic) {
			return full, codeOf(err), err
		}
		return full, errNone, nil
	}
	if err := srv.store.CreateTopic(rt.Topic, cfg); err != nil {
		if errors.Is(err, strata.ErrInvalidConfig) {
			return full, errInvalidConfig, err
		}
		return full, codeOf(err), err
	}
	return full, errNone, nil
}
