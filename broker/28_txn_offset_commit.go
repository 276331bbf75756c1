package broker

import (
	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleTxnOffsetCommit adds a group's offsets to the producer's open
// transaction with Store.CommitTxnOffsets: committed at its EndTxn, with
// their metadata strings, or dropped. From v3 the request names the
// consumer's member id and generation (KIP-447), which memberCode checks
// as OffsetCommit does (a member not of the group's generation is
// UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION or FENCED_INSTANCE_ID). Below v3,
// or with generation -1 and no member, the offsets are the group's
// whatever its members, as Kafka takes a transactional commit that names
// only the group (GroupMetadata.validateOffsetCommit, KIP-447's
// compatibility with sendOffsetsToTransaction(offsets, groupId)). No
// transaction open is INVALID_TXN_STATE, an
// offset out of range OFFSET_OUT_OF_RANGE, a metadata string too long
// OFFSET_METADATA_TOO_LARGE, every partition of the request alike (the
// offsets are added together or not at all); a fenced producer is
// INVALID_PRODUCER_EPOCH (PRODUCER_FENCED from v3).
func handleTxnOffsetCommit(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.TxnOffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	code := errInvalidGroupID
	switch {
	case req.Group == "":
	case req.Version < 3, req.MemberID == "" && req.InstanceID == nil && req.Generation < 0:
		// No member: a producer that names only the group (below v3
		// always), which Kafka's validateOffsetCommit lets a
		// transactional commit do whatever the group's members.
		code = errNone
	case req.InstanceID != nil:
		code = srv.memberCodeFor(req.Group, req.MemberID, *req.InstanceID, req.Generation)
	default:
		code = srv.memberCode(req.Group, req.MemberID, req.Generation)
	}
	if code == errNone {
		offsets := map[strata.TopicPartition]strata.OffsetAndMetadata{}
		for _, rt := range req.Topics {
			for _, rp := range rt.Partitions {
				om := strata.OffsetAndMetadata{Offset: rp.Offset}
				if rp.Metadata != nil {
					om.Metadata = *rp.Metadata
				}
				offsets[strata.TopicPartition{Topic: rt.Topic, Partition: int(rp.Partition)}] = om
			}
		}
		p := strata.TxnProducer{ID: req.TransactionalID, ProducerID: req.ProducerID, Epoch: req.ProducerEpoch}
		code = txnCodeOf(srv.store.CommitTxnOffsets(srv.ctx, p, req.Group, offsets), req.Version >= 3)
	}
	for _, rt := range req.Topics {
		st := kmsg.NewTxnOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
