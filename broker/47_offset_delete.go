package broker

import (
	"errors"
	"slices"

	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerProtocolType is the protocol type of Kafka's consumers, whose
// member metadata lists the topics they subscribe to.
const consumerProtocolType = "consumer"

// handleOffsetDelete deletes a group's committed offsets of some
// partitions (Store.DeletePartitionOffsets), as Kafka's
// GroupCoordinator.handleDeleteOffsets does: a partition of a topic a
// member subscribes to (by its consumer protocol metadata, or a
// consumer's in the process) is GROUP_SUBSCRIBED_TO_TOPIC, an unknown
// topic UNKNOWN_TOPIC_OR_PARTITION; a group with neither members nor
// offsets is GROUP_ID_NOT_FOUND, and one whose members are not
// consumers NON_EMPTY_GROUP.
func handleOffsetDelete(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetDeleteRequest)
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	if req.Group == "" {
		resp.ErrorCode = errInvalidGroupID
		return resp, nil
	}
	known := srv.store.Groups()
	gs := &srv.groups
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.groupLocked(req.Group)
	var subscribed map[string]bool
	switch {
	case g == nil && !slices.Contains(known, req.Group):
		resp.ErrorCode = errGroupIDNotFound
		return resp, nil
	case g != nil && len(g.members) > 0 && g.protocolType != consumerProtocolType:
		resp.ErrorCode = errNonEmptyGroup
		return resp, nil
	case g != nil:
		subscribed = g.subscriptionsLocked()
	}
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetDeleteResponseTopic()
		st.Topic = rt.Topic
		code := errNone
		var parts []strata.TopicPartition
		for _, rp := range rt.Partitions {
			parts = append(parts, strata.TopicPartition{Topic: rt.Topic, Partition: int(rp.Partition)})
		}
		switch _, err := srv.store.DescribeTopic(rt.Topic); {
		case err != nil:
			code = codeOf(err)
		case subscribed[rt.Topic]:
			code = errGroupSubscribedToTopic
		default:
			err := srv.store.DeletePartitionOffsets(req.Group, parts)
			if errors.Is(err, strata.ErrGroupActive) {
				code = errGroupSubscribedToTopic
			} else {
				code = groupCodeOf(err)
			}
		}
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetDeleteResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// subscriptionsLocked returns the topics g's members subscribe to, read
// from their consumer protocol metadata (ConsumerMemberMetadata) for the
// generation's protocol, or any of theirs during a join.
func (g *wireGroup) subscriptionsLocked() map[string]bool {
	topics := map[string]bool{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			if g.protocol != "" && p.Name != g.protocol {
				continue
			}
			var md kmsg.ConsumerMemberMetadata
			if md.ReadFrom(p.Metadata) == nil {
				for _, t := range md.Topics {
					topics[t] = true
				}
			}
		}
	}
	return topics
}
