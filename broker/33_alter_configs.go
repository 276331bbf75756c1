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
	count := resourceCounts(len(req.Resources), func(i int) (kmsg.ConfigResourceType, string) {
		return req.Resources[i].ResourceType, req.Resources[i].ResourceName
	})
	for _, rr := range req.Resources {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		ops := make([]configOp, len(rr.Configs))
		for i, c := range rr.Configs {
			ops[i] = configOp{name: c.Name, op: kmsg.IncrementalAlterConfigOpSet, value: c.Value}
		}
		code, err := srv.alterResource(rr.ResourceType, rr.ResourceName, ops, true, req.ValidateOnly, count)
		if err != nil {
			sr.ErrorCode = code
			msg := err.Error()
			sr.ErrorMessage = &msg
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp, nil
}

type resourceKey struct {
	typ  kmsg.ConfigResourceType
	name string
}

// resourceCounts counts how many times a request names each resource.
func resourceCounts(n int, at func(i int) (kmsg.ConfigResourceType, string)) map[resourceKey]int {
	count := map[resourceKey]int{}
	for i := range n {
		typ, name := at(i)
		count[resourceKey{typ, name}]++
	}
	return count
}

// alterResource alters one resource of AlterConfigs or
// IncrementalAlterConfigs (see alterTopic), and returns the error code
// and error.
func (srv *Server) alterResource(typ kmsg.ConfigResourceType, name string, ops []configOp, replace, validateOnly bool, count map[resourceKey]int) (int16, error) {
	if n := count[resourceKey{typ, name}]; n > 1 {
		return errInvalidRequest, fmt.Errorf("broker: resource %v %q is named %d times", typ, name, n)
	}
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
