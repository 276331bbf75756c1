package broker

import (
	"errors"
	"fmt"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/topic"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleCreatePartitions raises each topic's partition count to the one
// asked for with Store.CreatePartitions (keys hash over the new count from
// then on; clients see the new partitions at their next Metadata). A count
// not above the current one, or over topic.MaxPartitions, is
// INVALID_PARTITIONS; a manual assignment must name broker 0 for each new
// partition (INVALID_REPLICA_ASSIGNMENT otherwise); a topic named twice
// is INVALID_REQUEST for each; an unknown topic UNKNOWN_TOPIC_OR_PARTITION,
// an internal one INVALID_TOPIC_EXCEPTION. ValidateOnly checks without
// creating. Each topic gets its own error code and message.
func handleCreatePartitions(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	count := map[string]int{}
	for _, rt := range req.Topics {
		count[rt.Topic]++
	}
	for _, rt := range req.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		var code int16
		var err error
		if count[rt.Topic] > 1 {
			code, err = errInvalidRequest, fmt.Errorf("broker: topic %q is named %d times", rt.Topic, count[rt.Topic])
		} else {
			code, err = srv.createPartitions(rt, req.ValidateOnly)
		}
		if err != nil {
			st.ErrorCode = code
			msg := err.Error()
			st.ErrorMessage = &msg
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// createPartitions grows (or with validateOnly checks) one topic, and
// returns the error code and error.
func (srv *Server) createPartitions(rt kmsg.CreatePartitionsRequestTopic, validateOnly bool) (int16, error) {
	if topic.IsInternal(rt.Topic) {
		err := fmt.Errorf("broker: topic %q is the store's own: %w", rt.Topic, strata.ErrReservedTopic)
		return codeOf(err), err
	}
	d, err := srv.store.DescribeTopic(rt.Topic)
	if err != nil {
		return codeOf(err), err
	}
	have, total := len(d.Partitions), int(rt.Count)
	switch {
	case total == have:
		return errInvalidPartitions, fmt.Errorf("broker: topic %q already has %d partitions", rt.Topic, have)
	case total < have:
		return errInvalidPartitions, fmt.Errorf("broker: topic %q has %d partitions, more than the %d asked for: partitions are never removed", rt.Topic, have, total)
	case total > topic.MaxPartitions:
		return errInvalidPartitions, fmt.Errorf("broker: %d partitions: at most %d", total, topic.MaxPartitions)
	}
	if rt.Assignment != nil {
		if len(rt.Assignment) != total-have {
			return errInvalidReplicaAssignment, fmt.Errorf("broker: %d replica assignments for the %d new partitions", len(rt.Assignment), total-have)
		}
		for _, a := range rt.Assignment {
			if len(a.Replicas) != 1 || a.Replicas[0] != 0 {
				return errInvalidReplicaAssignment, fmt.Errorf("broker: replicas %v: the one broker, 0, holds every partition", a.Replicas)
			}
		}
	}
	if validateOnly {
		return errNone, nil
	}
	if err := srv.store.CreatePartitions(rt.Topic, total); err != nil {
		if errors.Is(err, strata.ErrInvalidConfig) {
			return errInvalidPartitions, err
		}
		return codeOf(err), err
	}
	return errNone, nil
}
