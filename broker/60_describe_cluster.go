package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// handleDescribeCluster describes the cluster of one broker, node 0, its
// own controller, at the advertised address (KIP-700). Only the brokers
// endpoint type (1) is served: the controllers' (2) is
// MISMATCHED_ENDPOINT_TYPE, as a Kafka broker answers it (KIP-919), any
// other UNSUPPORTED_ENDPOINT_TYPE. The cluster's authorized operations,
// when asked for, are all of them (authorized_ops.go).
func handleDescribeCluster(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = req.EndpointType
	resp.ClusterAuthorizedOperations = omittedOps
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = clusterOps
	}
	if req.Version >= 1 && req.EndpointType != 1 {
		resp.ErrorCode = errUnsupportedEndpointType
		if req.EndpointType == 2 {
			resp.ErrorCode = errMismatchedEndpointType
		}
		return resp, nil
	}
	host, port := srv.advertised()
	resp.ClusterID = clusterID
	resp.ControllerID = nodeID
	b := kmsg.NewDescribeClusterResponseBroker()
	b.NodeID, b.Host, b.Port = nodeID, host, port
	resp.Brokers = []kmsg.DescribeClusterResponseBroker{b}
	return resp, nil
}

// The error codes of DescribeCluster's endpoint types (KIP-919).
const (
	errMismatchedEndpointType  int16 = 114
	errUnsupportedEndpointType int16 = 115
)
