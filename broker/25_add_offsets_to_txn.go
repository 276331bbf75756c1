package broker

import (
	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleAddOffsetsToTxn opens the producer's transaction, if none is open,
// for the offsets of a group that TxnOffsetCommit then adds
// (Store.AddTxnPartitions with no partitions: the offsets' partition of
// __consumer_offsets enters the transaction when they are written, at
// EndTxn). An empty group id is INVALID_GROUP_ID; the producer's errors
// are AddPartitionsToTxn's.
func handleAddOffsetsToTxn(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AddOffsetsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	if req.Group == "" {
		resp.ErrorCode = errInvalidGroupID
		return resp, nil
	}
	p := strata.TxnProducer{ID: req.TransactionalID, ProducerID: req.ProducerID, Epoch: req.ProducerEpoch}
	resp.ErrorCode = txnCodeOf(srv.store.AddTxnPartitions(srv.ctx, p), req.Version >= 2)
	return resp, nil
}
