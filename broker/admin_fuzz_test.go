package broker

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzAdminFrame feeds the config and offset APIs frames made from
// DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, ListOffsets and
// a validate-only CreatePartitions: none panics, an error is a malformed
// frame, and the response encodes. CreatePartitions frames that would
// grow the topic are skipped (each new partition is directories and
// files on disk).
func FuzzAdminFrame(f *testing.F) {
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dc.SetVersion(4)
	dc.IncludeSynonyms, dc.IncludeDocumentation = true, true
	for _, typ := range []kmsg.ConfigResourceType{kmsg.ConfigResourceTypeTopic, kmsg.ConfigResourceTypeBroker} {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = typ, "events"
		dc.Resources = append(dc.Resources, r)
	}
	f.Add(frameOf(dc))
	ptr := func(s string) *string { return &s }
	ac := kmsg.NewPtrAlterConfigsRequest()
	ac.SetVersion(2)
	ar := kmsg.NewAlterConfigsRequestResource()
	ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeTopic, "events"
	ar.Configs = []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: ptr("3600000")}, {Name: "min.cleanable.dirty.ratio", Value: ptr("0.1")}}
	ac.Resources = append(ac.Resources, ar)
	f.Add(frameOf(ac))
	ic := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ic.SetVersion(1)
	ir := kmsg.NewIncrementalAlterConfigsRequestResource()
	ir.ResourceType, ir.ResourceName = kmsg.ConfigResourceTypeTopic, "events"
	ir.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{
		{Name: "retention.bytes", Op: kmsg.IncrementalAlterConfigOpSet, Value: ptr("1000000")},
		{Name: "cleanup.policy", Op: kmsg.IncrementalAlterConfigOpAppend, Value: ptr("compact")},
		{Name: "delete.retention.ms", Op: kmsg.IncrementalAlterConfigOpDelete},
	}
	ic.Resources = append(ic.Resources, ir)
	f.Add(frameOf(ic))
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.SetVersion(10)
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "events"
	for _, ts := range []int64{-1, -2, -3, -4, -5, 0, 1 << 40} {
		p := kmsg.NewListOffsetsRequestTopicPartition()
		p.Timestamp = ts
		lt.Partitions = append(lt.Partitions, p)
	}
	lo.Topics = append(lo.Topics, lt)
	f.Add(frameOf(lo))
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.SetVersion(3)
	cp.ValidateOnly = true
	ct := kmsg.NewCreatePartitionsRequestTopic()
	ct.Topic, ct.Count = "events", 4
	ct.Assignment = []kmsg.CreatePartitionsRequestTopicAssignment{{Replicas: []int32{0}}, {Replicas: []int32{0}}}
	cp.Topics = append(cp.Topics, ct)
	f.Add(frameOf(cp))
	srv := testServer(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, body, err := parseHeader(frame)
		if err == nil && h.key == kmsg.CreatePartitions.Int16() {
			req := kmsg.NewPtrCreatePartitionsRequest()
			req.SetVersion(h.version)
			if h.version < 0 || h.version > 3 || req.ReadFrom(body) != nil || !req.ValidateOnly {
				return
			}
		}
		resp, _, err := srv.handleFrame(frame)
		if errors.Is(err, ErrServerClosed) {
			return
		}
		if err != nil {
			require.ErrorIs(t, err, errMalformed)
			require.False(t, errors.Is(err, errPanic), "%v", err)
			return
		}
		if resp != nil {
			appendResponse(nil, 0, resp)
			releaseResponse(resp)
		}
	})
}
