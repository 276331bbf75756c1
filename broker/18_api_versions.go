package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// handleApiVersions lists the APIs served with their version ranges.
func handleApiVersions(srv *Server, _ header, _ kmsg.Request) (kmsg.Response, error) {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ApiKeys = apiKeys()
	return resp, nil
}

// unsupportedApiVersions is the answer to an ApiVersions request at a
// version the broker does not know: a v0 response (which every client
// reads) with UNSUPPORTED_VERSION and the ranges served, from which the
// client picks a version and asks again (Kafka's ApiVersionsRequest
// getErrorResponse, KIP-511).
func (srv *Server) unsupportedApiVersions() kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	resp.ErrorCode = errUnsupportedVersion
	resp.ApiKeys = apiKeys()
	return resp
}

func apiKeys() []kmsg.ApiVersionsResponseApiKey {
	keys := make([]kmsg.ApiVersionsResponseApiKey, 0, len(apis))
	for _, a := range apis {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.key.Int16(), a.min, a.max
		keys = append(keys, k)
	}
	return keys
}
