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
	alters := make([]resourceAlter, len(req.Resources))
	for i, rr := range req.Resources {
		a := resourceAlter{typ: rr.ResourceType, name: rr.ResourceName, ops: make([]configOp, len(rr.Configs))}
		for j, c := range rr.Configs {
			a.ops[j] = configOp{name: c.Name, op: c.Op, value: c.Value}
		}
		alters[i] = a
	}
	for i, res := range srv.alterResources(alters, false, req.ValidateOnly) {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = req.Resources[i].ResourceType, req.Resources[i].ResourceName
		sr.ErrorCode, sr.ErrorMessage = res.code, res.msg
		resp.Resources = append(resp.Resources, sr)
	}
	return resp, nil
}
