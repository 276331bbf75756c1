package broker

import (
	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleDescribeConfigs describes topics' configs: those Strata has (see
// topic_configs.go), with the defaults filled in, each marked default or
// set for the topic (the names asked for, or all of them). The broker's
// own configs are an empty list; other resource types are
// INVALID_REQUEST. Every config is read-only here (AlterConfigs is not
// served yet).
func handleDescribeConfigs(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range req.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		switch rr.ResourceType {
		case kmsg.ConfigResourceTypeBroker:
			sr.Configs = []kmsg.DescribeConfigsResponseResourceConfig{}
		case kmsg.ConfigResourceTypeTopic:
			d, err := srv.store.DescribeTopic(rr.ResourceName)
			if err != nil {
				sr.ErrorCode = codeOf(err)
				msg := err.Error()
				sr.ErrorMessage = &msg
				break
			}
			sr.Configs = topicConfigEntries(d.Config, rr.ConfigNames)
		default:
			sr.ErrorCode = errInvalidRequest
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp, nil
}

// topicConfigEntries lists a topic's configs of the names asked for (all
// for none).
func topicConfigEntries(c strata.TopicConfig, only []string) []kmsg.DescribeConfigsResponseResourceConfig {
	wanted := map[string]bool{}
	for _, n := range only {
		wanted[n] = true
	}
	names, values, isDefault := describeConfigs(c)
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for i, name := range names {
		if len(wanted) > 0 && !wanted[name] {
			continue
		}
		e := kmsg.NewDescribeConfigsResponseResourceConfig()
		e.Name = name
		e.Value = &values[i]
		e.ReadOnly = true
		e.IsDefault = isDefault[i]
		e.Source = kmsg.ConfigSourceDynamicTopicConfig
		if isDefault[i] {
			e.Source = kmsg.ConfigSourceDefaultConfig
		}
		out = append(out, e)
	}
	return out
}
