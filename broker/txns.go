package broker

import (
	"context"
	"errors"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// txnCodeOf returns Kafka's error code for an error of the store's
// transactional producer calls (InitTxnProducer, AddTxnPartitions,
// AppendTxnBatch, CommitTxnOffsets, EndTxn). A producer fenced by a newer
// one is PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH for a request too old
// to know it (fencedCode false; KIP-588); one whose transaction timed out
// is INVALID_PRODUCER_EPOCH, which a client recovers from with
// InitProducerId at its producer id and epoch (KIP-360).
func txnCodeOf(err error, fencedCode bool) int16 {
	switch {
	case err == nil:
		return errNone
	case errors.Is(err, strata.ErrTxnTimedOut):
		return errInvalidProducerEpoch
	case errors.Is(err, strata.ErrProducerFenced):
		if fencedCode {
			return errProducerFenced
		}
		return errInvalidProducerEpoch
	case errors.Is(err, strata.ErrInvalidProducerIDMapping):
		return errInvalidProducerIDMapping
	case errors.Is(err, strata.ErrInvalidTxnState):
		return errInvalidTxnState
	case errors.Is(err, strata.ErrConcurrentTxns):
		return errConcurrentTransactions
	case errors.Is(err, strata.ErrClosed), errors.Is(err, context.Canceled):
		return errCoordinatorNotAvailable
	}
	return groupCodeOf(err)
}

// produceTxn appends a partition's batch of a Produce request with a
// transactional id: a transactional batch to the producer's open
// transaction (Store.AppendTxnBatch; a partition not added to it is
// INVALID_TXN_STATE, a fenced epoch INVALID_PRODUCER_EPOCH, as Kafka's
// ProducerStateManager answers), any other as a Produce without one.
func (srv *Server) produceTxn(txnID, topic string, part int32, records []byte) (int16, int64) {
	h, err := log.ReadHeader(records)
	if err != nil || !h.IsTransactional() || h.IsControl() {
		return srv.produce(topic, part, records)
	}
	p := strata.TxnProducer{ID: txnID, ProducerID: h.ProducerID, Epoch: h.ProducerEpoch}
	base, _, err := srv.store.AppendTxnBatch(srv.ctx, p, topic, int(part), records)
	switch {
	case err == nil:
		return errNone, base
	case errors.Is(err, strata.ErrTxnTimedOut):
		return errInvalidProducerEpoch, -1
	case errors.Is(err, strata.ErrInvalidProducerIDMapping):
		return errInvalidProducerIDMapping, -1
	}
	return codeOf(err), -1 // ErrProducerFenced, ErrInvalidTxnState and a Produce's own errors
}
