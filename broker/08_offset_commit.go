package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// errOffsetMetadataTooLarge is Kafka's code for a commit's metadata
// over the size limit.
const errOffsetMetadataTooLarge int16 = 12

// handleOffsetCommit commits offsets with Store.Commit, a member's of
// the group's current generation (memberCode checks it as Kafka does), or
// a standalone commit (generation -1 and no member id, as kadm and manual
// committers send it) of a group without members over the wire. The
// commits go into the store's __consumer_offsets, where Store.Committed,
// Lag and ResetOffsets see them, metadata strings included. A group with
// consumers in the process refuses them (UNKNOWN_MEMBER_ID).
func handleOffsetCommit(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	code := errInvalidGroupID
	switch {
	case req.Group == "":
	case req.InstanceID != nil:
		code = srv.memberCodeFor(req.Group, req.MemberID, *req.InstanceID, req.Generation)
	default:
		code = srv.memberCode(req.Group, req.MemberID, req.Generation)
	}
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.ErrorCode = code
			if code == errNone {
				var metadata string
				if rp.Metadata != nil {
					metadata = *rp.Metadata
				}
				sp.ErrorCode = groupCodeOf(srv.store.Commit(req.Group, rt.Topic, int(rp.Partition), rp.Offset, metadata))
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
