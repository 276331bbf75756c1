package broker

import (
	"errors"

	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleOffsetFetch returns a group's committed offsets with
// Store.Committed (in-process consumers' and wire clients' alike), with
// their metadata strings; a partition without one is offset -1. A null
// topic list (v2+) asks for every committed offset of the group. The
// requests of several groups (v8+) are not served.
func handleOffsetFetch(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Group == "" {
		resp.ErrorCode = errInvalidGroupID
		return resp, nil
	}
	topics := req.Topics
	if topics == nil && req.Version >= 2 {
		for _, name := range srv.store.Topics() {
			d, err := srv.store.DescribeTopic(name)
			if err != nil {
				continue
			}
			t := kmsg.NewOffsetFetchRequestTopic()
			t.Topic = name
			for _, p := range d.Partitions {
				if _, ok := srv.store.Committed(req.Group, name, p.Partition); ok {
					t.Partitions = append(t.Partitions, int32(p.Partition))
				}
			}
			if len(t.Partitions) > 0 {
				topics = append(topics, t)
			}
		}
	}
	for _, rt := range topics {
		st := kmsg.NewOffsetFetchResponseTopic()
		st.Topic = rt.Topic
		for _, part := range rt.Partitions {
			sp := kmsg.NewOffsetFetchResponseTopicPartition()
			sp.Partition, sp.Offset, sp.LeaderEpoch = part, -1, -1
			md := "" // Kafka's answer without a commit too
			if om, ok := srv.store.Committed(req.Group, rt.Topic, int(part)); ok {
				sp.Offset, md = om.Offset, om.Metadata
			}
			sp.Metadata = &md
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
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
