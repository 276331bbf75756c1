package broker

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// handleOffsetCommit commits offsets with Store.Commit, a member's of
// the group's current generation (memberCode checks it as Kafka does), or
// a standalone commit (generation -1 and no member id, as kadm and manual
// committers send it) of a group without members over the wire. The
// commits go into the store's __consumer_offsets, where Store.Committed,
// Lag and ResetOffsets see them, metadata strings included. A group with
// consumers in the process refuses them (UNKNOWN_MEMBER_ID). A member of
// a KIP-848 consumer group (ConsumerGroupHeartbeat) commits with v9 or
// later at its member epoch (the generation field), as Kafka's
// ConsumerGroup validateOffsetCommit has it (UNSUPPORTED_VERSION,
// STALE_MEMBER_EPOCH), partitions it owns (STALE_MEMBER_EPOCH for
// another: its assignment moved on), with Store.CommitAsMember.
func handleOffsetCommit(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	code := errInvalidGroupID
	coordID, gen, code848, is848 := srv.consumers.memberEpoch(req.Group, req.MemberID, req.Generation)
	switch {
	case req.Group == "":
	case is848 && req.Version < 9:
		// Kafka's ConsumerGroup validateOffsetCommit.
		code = errUnsupportedVersion
	case is848:
		code = code848
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
				if is848 {
					sp.ErrorCode = memberCommitCode(srv.store.CommitAsMember(req.Group, coordID, gen,
						map[strata.TopicPartition]strata.OffsetAndMetadata{{Topic: rt.Topic, Partition: int(rp.Partition)}: {Offset: rp.Offset, Metadata: metadata}}))
				} else {
					sp.ErrorCode = groupCodeOf(srv.store.Commit(req.Group, rt.Topic, int(rp.Partition), rp.Offset, metadata))
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// memberCommitCode is the code of a KIP-848 member's commit error.
func memberCommitCode(err error) int16 {
	switch {
	case errors.Is(err, strata.ErrNotOwner):
		return errStaleMemberEpoch
	case errors.Is(err, strata.ErrFenced):
		return errUnknownMemberID
	}
	return groupCodeOf(err)
}
