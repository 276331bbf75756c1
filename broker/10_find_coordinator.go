package broker

import (
	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The coordinator types of FindCoordinator (KIP-98; share groups, 2, are
// not served).
const (
	coordinatorGroup       = 0
	coordinatorTransaction = 1
)

// handleFindCoordinator answers node 0, the one broker, for every group
// and transactional id (one key below v4, a list from v4 on, KIP-699).
// For a group it first has the store create __consumer_offsets, if it
// has none yet (Store.EnsureOffsetsTopic), as Kafka creates its own
// then; a failure to is COORDINATOR_NOT_AVAILABLE. Debian's librdkafka
// also enables LZ4 only with FindCoordinator v0 advertised
// (rdkafka_feature.c).
func handleFindCoordinator(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	host, port := srv.advertised()
	code := errNone
	switch req.CoordinatorType {
	case coordinatorGroup:
		if req.Version < 4 || len(req.CoordinatorKeys) > 0 {
			if err := srv.store.EnsureOffsetsTopic(); err != nil {
				srv.logf("broker: creating %s: %v", strata.ConsumerOffsetsTopic, err)
				code = errCoordinatorNotAvailable
			}
		}
	case coordinatorTransaction:
	default:
		code = errInvalidRequest
	}
	if req.Version < 4 {
		resp.ErrorCode = code
		resp.NodeID, resp.Host, resp.Port = nodeID, host, port
		if code != errNone {
			resp.NodeID, resp.Host, resp.Port = -1, "", -1
		}
		return resp, nil
	}
	for _, key := range req.CoordinatorKeys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.ErrorCode = key, code
		c.NodeID, c.Host, c.Port = nodeID, host, port
		if code != errNone {
			c.NodeID, c.Host, c.Port = -1, "", -1
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	return resp, nil
}
