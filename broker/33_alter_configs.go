package broker

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleAlterConfigs sets topics' configs, as Kafka's (legacy)
// AlterConfigs does, replacing the topic's dynamic configs: those named
// take their values, and every other config that may change on an
// existing topic (retention.ms, retention.bytes, delete.retention.ms,
// min.compaction.lag.ms, max.compaction.lag.ms,
// min.cleanable.dirty.ratio) goes back to its default. The other configs
// are fixed when the topic is created: naming one with another value is
// INVALID_CONFIG, as is a config Strata does not have or a bad value; a
// null value is INVALID_REQUEST. The change is durable
// (Store.AlterTopicConfig). ValidateOnly checks without changing. The
// broker resource ("0" or "") has no config to alter: an empty list is
// answered with success, any config with INVALID_CONFIG; other resource
// types are INVALID_REQUEST. Each resource gets its own error code and
// message.
func handleAlterConfigs(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	alters := make([]resourceAlter, len(req.Resources))
	for i, rr := range req.Resources {
		a := resourceAlter{typ: rr.ResourceType, name: rr.ResourceName, ops: make([]configOp, len(rr.Configs))}
		for j, c := range rr.Configs {
			a.ops[j] = configOp{name: c.Name, op: kmsg.IncrementalAlterConfigOpSet, value: c.Value}
		}
		alters[i] = a
	}
	for i, res := range srv.alterResources(alters, true, req.ValidateOnly) {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = req.Resources[i].ResourceType, req.Resources[i].ResourceName
		sr.ErrorCode, sr.ErrorMessage = res.code, res.msg
		resp.Resources = append(resp.Resources, sr)
	}
	return resp, nil
}

// resourceAlter is one resource of an AlterConfigs or
// IncrementalAlterConfigs request: the configs to alter.
type resourceAlter struct {
	typ  kmsg.ConfigResourceType
	name string
	ops  []configOp
}

type resourceKey struct {
	typ  kmsg.ConfigResourceType
	name string
}

// alterResult is a resource's error code and message (nil for none).
type alterResult struct {
	code int16
	msg  *string
}

// alterResources alters the resources of an AlterConfigs (replace) or
// IncrementalAlterConfigs request, each on its own (see alterResource),
// and returns their results in order. A resource named more than once
// is INVALID_REQUEST each time, and is not altered.
func (srv *Server) alterResources(alters []resourceAlter, replace, validateOnly bool) []alterResult {
	count := map[resourceKey]int{}
	for _, a := range alters {
		count[resourceKey{a.typ, a.name}]++
	}
	out := make([]alterResult, len(alters))
	for i, a := range alters {
		var code int16
		var err error
		if n := count[resourceKey{a.typ, a.name}]; n > 1 {
			code, err = errInvalidRequest, fmt.Errorf("broker: resource %v %q is named %d times", a.typ, a.name, n)
		} else {
			code, err = srv.alterResource(a.typ, a.name, a.ops, replace, validateOnly)
		}
		if err != nil {
			msg := err.Error()
			out[i] = alterResult{code: code, msg: &msg}
		}
	}
	return out
}

// alterResource alters one resource (see alterTopic), and returns the
// error code and error.
func (srv *Server) alterResource(typ kmsg.ConfigResourceType, name string, ops []configOp, replace, validateOnly bool) (int16, error) {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		return srv.alterTopic(name, ops, replace, validateOnly)
	case kmsg.ConfigResourceTypeBroker:
		if name != "" && name != "0" {
			return errInvalidRequest, fmt.Errorf("broker: broker %q: the one broker is 0", name)
		}
		if len(ops) > 0 {
			return errInvalidConfig, fmt.Errorf("broker: config %q: the broker's configs are fixed (see DescribeConfigs); topic configs are altered per topic", ops[0].name)
		}
		return errNone, nil
	}
	return errInvalidRequest, fmt.Errorf("broker: resource type %v: Strata alters topics (2)", typ)
}
