package broker

import (
	"errors"
	"time"

	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleInitProducerID gives a producer its producer id and epoch.
//
// An idempotent producer (no transactional id) gets a new producer id
// from Store.NewProducerID, at epoch 0, also when it asks to bump the
// epoch of the id it has (v3+, KIP-360): a new id makes its sequences
// start over as surely.
//
// A transactional producer gets its transactional id's producer id at the
// next epoch from Store.InitTxnProducer, which aborts and fences the id's
// open transaction, an older producer's or a Txn of Store.BeginTxn's; with
// its current producer id and epoch (v3+, KIP-360) it recovers from an
// error: another producer id is INVALID_PRODUCER_ID_MAPPING, another epoch
// than the id's (or the one a timeout fenced) PRODUCER_FENCED
// (INVALID_PRODUCER_EPOCH below v4, KIP-588). A timeout outside [1 ms,
// 15 min] is INVALID_TRANSACTION_TIMEOUT, an empty id INVALID_REQUEST.
func handleInitProducerID(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		initTxnProducer(srv, req, resp)
		return resp, nil
	}
	id, err := srv.store.NewProducerID()
	if err != nil {
		resp.ErrorCode = codeOf(err)
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp, nil
}

// initTxnProducer answers an InitProducerId with a transactional id.
func initTxnProducer(srv *Server, req *kmsg.InitProducerIDRequest, resp *kmsg.InitProducerIDResponse) {
	if *req.TransactionalID == "" {
		resp.ErrorCode = errInvalidRequest
		return
	}
	timeout := time.Duration(req.TransactionTimeoutMillis) * time.Millisecond
	if req.TransactionTimeoutMillis <= 0 || timeout > strata.MaxTxnTimeout {
		resp.ErrorCode = errInvalidTransactionTimeout
		return
	}
	opts := strata.TxnProducerOptions{ID: *req.TransactionalID, Timeout: timeout}
	if req.Version >= 3 && req.ProducerID >= 0 && req.ProducerEpoch >= 0 {
		opts.Current = &strata.TxnProducer{ID: opts.ID, ProducerID: req.ProducerID, Epoch: req.ProducerEpoch}
	}
	p, err := srv.store.InitTxnProducer(srv.ctx, opts)
	if err != nil {
		resp.ErrorCode = txnCodeOf(err, req.Version >= 4)
		if errors.Is(err, strata.ErrInvalidConfig) {
			resp.ErrorCode = errInvalidTransactionTimeout
			if l := len(opts.ID); l > 32767 {
				resp.ErrorCode = errInvalidRequest
			}
		}
		return
	}
	resp.ProducerID, resp.ProducerEpoch = p.ProducerID, p.Epoch
}
