package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleInitProducerID gives an idempotent producer a new producer id from
// Store.NewProducerID, at epoch 0, also when it asks to bump the epoch of
// the id it has (v3+, KIP-360): a new id makes its sequences start over
// as surely. A transactional id is refused with
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED: transactions over the wire are
// not served yet.
func handleInitProducerID(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		resp.ErrorCode = errTransactionalIDAuthorizationFailed
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
