package broker

import (
	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleEndTxn commits or aborts the producer's transaction with
// Store.EndTxn, answered once it is done (the decision durable and the
// markers written, as Txn.Commit). A retry of the last EndTxn, done
// already, is answered NONE; no transaction open, or the opposite
// decision, INVALID_TXN_STATE; the producer's errors are
// AddPartitionsToTxn's. The producer keeps its epoch: v5, which bumps it
// at every transaction (KIP-890's transaction version 2), is not served,
// and ApiVersions advertises no transaction.version feature, so franz-go
// and librdkafka both run transaction version 1.
func handleEndTxn(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.EndTxnRequest)
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	p := strata.TxnProducer{ID: req.TransactionalID, ProducerID: req.ProducerID, Epoch: req.ProducerEpoch}
	resp.ErrorCode = txnCodeOf(srv.store.EndTxn(srv.ctx, p, req.Commit), req.Version >= 2)
	return resp, nil
}
