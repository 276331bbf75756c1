package broker

import (
	"errors"

	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleOffsetFetch returns groups' committed offsets with
// Store.Committed (in-process consumers' and wire clients' alike), with
// their metadata strings; a partition without one is offset -1. A null
// topic list (v2+) asks for every committed offset of the group. From v8
// a request asks for several groups (KIP-709). A request with
// require_stable (v7+, KIP-447; librdkafka's read_committed consumers and
// franz-go's group consumers always send it) gets
// UNSTABLE_OFFSET_COMMIT, which clients retry, for a partition whose
// offset an open transaction holds (Store.PendingTxnOffset): the offset
// the group has may be about to move, and a consumer that started from it
// would read again what the transaction consumed. From v9 a member of a
// KIP-848 consumer group fetches at its member epoch
// (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID), as Kafka's ConsumerGroup
// validateOffsetFetch checks it.
func handleOffsetFetch(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version < 8 {
		var topics []requestedTopic
		for _, t := range req.Topics {
			topics = append(topics, requestedTopic{t.Topic, t.Partitions})
		}
		code, got := srv.committed(req.Group, topics, req.Topics == nil && req.Version >= 2, req.RequireStable)
		resp.ErrorCode = code
		for _, t := range got {
			st := kmsg.NewOffsetFetchResponseTopic()
			st.Topic = t.topic
			for _, p := range t.parts {
				sp := kmsg.NewOffsetFetchResponseTopicPartition()
				sp.Partition, sp.Offset, sp.LeaderEpoch, sp.Metadata = p.partition, p.offset, -1, &p.metadata
				sp.ErrorCode = p.code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil
	}
	for _, rg := range req.Groups {
		var topics []requestedTopic
		for _, t := range rg.Topics {
			topics = append(topics, requestedTopic{t.Topic, t.Partitions})
		}
		code, got := srv.consumers.fetchCode(rg.Group, rg.MemberID, rg.MemberEpoch), []committedTopic(nil)
		if code == errNone {
			code, got = srv.committed(rg.Group, topics, rg.Topics == nil, req.RequireStable)
		}
		sg := kmsg.NewOffsetFetchResponseGroup()
		sg.Group, sg.ErrorCode = rg.Group, code
		for _, t := range got {
			st := kmsg.NewOffsetFetchResponseGroupTopic()
			st.Topic = t.topic
			for _, p := range t.parts {
				sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
				sp.Partition, sp.Offset, sp.LeaderEpoch, sp.Metadata = p.partition, p.offset, -1, &p.metadata
				sp.ErrorCode = p.code
				st.Partitions = append(st.Partitions, sp)
			}
			sg.Topics = append(sg.Topics, st)
		}
		resp.Groups = append(resp.Groups, sg)
	}
	return resp, nil
}

// requestedTopic is a topic and the partitions of it an OffsetFetch asks
// for.
type requestedTopic struct {
	topic string
	parts []int32
}

// committedTopic is a topic's committed offsets.
type committedTopic struct {
	topic string
	parts []committedPartition
}

// committedPartition is a partition's committed offset, -1 and ""
// without one (Kafka's answer), or its error code.
type committedPartition struct {
	partition int32
	offset    int64
	metadata  string
	code      int16
}

// committed returns group's committed offsets of topics, or of every
// partition it has one for if all is set, and the group's error code;
// with stable, UNSTABLE_OFFSET_COMMIT for a partition whose offset an open
// transaction holds.
func (srv *Server) committed(group string, topics []requestedTopic, all, stable bool) (int16, []committedTopic) {
	if group == "" {
		return errInvalidGroupID, nil
	}
	if all {
		topics = nil
		for _, name := range srv.store.Topics() {
			d, err := srv.store.DescribeTopic(name)
			if err != nil {
				continue
			}
			t := requestedTopic{topic: name}
			for _, p := range d.Partitions {
				if _, ok := srv.store.Committed(group, name, p.Partition); ok {
					t.parts = append(t.parts, int32(p.Partition))
				}
			}
			if len(t.parts) > 0 {
				topics = append(topics, t)
			}
		}
	}
	out := make([]committedTopic, 0, len(topics))
	for _, rt := range topics {
		ct := committedTopic{topic: rt.topic}
		for _, part := range rt.parts {
			cp := committedPartition{partition: part, offset: -1}
			if stable && srv.store.PendingTxnOffset(group, rt.topic, int(part)) {
				cp.code = errUnstableOffsetCommit
			} else if om, ok := srv.store.Committed(group, rt.topic, int(part)); ok {
				cp.offset, cp.metadata = om.Offset, om.Metadata
			}
			ct.parts = append(ct.parts, cp)
		}
		out = append(out, ct)
	}
	return errNone, out
}

// groupCodeOf is codeOf for the group APIs.
func groupCodeOf(err error) int16 {
	switch {
	case errors.Is(err, strata.ErrInvalidGroup):
		return errInvalidGroupID
	case errors.Is(err, strata.ErrMetadataTooLarge):
		return errOffsetMetadataTooLarge
	case errors.Is(err, strata.ErrGroupActive):
		return errUnknownMemberID
	}
	return codeOf(err)
}
