package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleIncrementalAlterConfigs changes topics' configs one by one (KIP-339):
// SET gives a config a value, DELETE puts it back to its default, APPEND
// and SUBTRACT add to and remove from a list config (cleanup.policy, the
// one Strata has); the configs not named stay as they are. Only the
// configs that may change on an existing topic may change (see
// handleAlterConfigs, whose errors, ValidateOnly and broker resource
// these are too); APPEND or SUBTRACT of another config is INVALID_CONFIG,
// an unknown operation or a null value to SET INVALID_REQUEST.
func handleIncrementalAlterConfigs(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	count := resourceCounts(len(req.Resources), func(i int) (kmsg.ConfigResourceType, string) {
		return req.Resources[i].ResourceType, req.Resources[i].ResourceName
	})
	for _, rr := range req.Resources {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		ops := make([]configOp, len(rr.Configs))
		for i, c := range rr.Configs {
			ops[i] = configOp{name: c.Name, op: c.Op, value: c.Value}
		}
		code, err := srv.alterResource(rr.ResourceType, rr.ResourceName, ops, false, req.ValidateOnly, count)
		if err != nil {
			sr.ErrorCode = code
			msg := err.Error()
			sr.ErrorMessage = &msg
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp, nil
}
