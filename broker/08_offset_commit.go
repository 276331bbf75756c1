package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The error codes of the group APIs beyond codeOf's.
const (
	errOffsetMetadataTooLarge int16 = 12
	errIllegalGeneration      int16 = 22
	errInvalidGroupID         int16 = 24
	errUnknownMemberID        int16 = 25
)

// handleOffsetCommit commits offsets with Store.Commit: Kafka's
// standalone commit, of a group without members over the wire
// (generation -1 and no member id, as kadm and manual committers send it;
// a member or generation is UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION, the
// group protocol not being served yet). The commits go into the store's
// __consumer_offsets, where Store.Committed, Lag and ResetOffsets see
// them, metadata strings included. A group with consumers in the process
// refuses them (UNKNOWN_MEMBER_ID).
func handleOffsetCommit(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	code := errNone
	switch {
	case req.Group == "":
		code = errInvalidGroupID
	case req.MemberID != "":
		code = errUnknownMemberID
	case req.Version >= 1 && req.Generation != -1:
		code = errIllegalGeneration
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
