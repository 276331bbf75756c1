package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

func createReq(version int16, validateOnly bool, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(version)
	req.ValidateOnly = validateOnly
	req.Topics = topics
	return req
}

func createTopic(name string, parts int32, rf int16, configs ...string) kmsg.CreateTopicsRequestTopic {
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, parts, rf
	for i := 0; i+1 < len(configs); i += 2 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = configs[i], &configs[i+1]
		t.Configs = append(t.Configs, c)
	}
	return t
}

// TestCreateDeleteTopics checks CreateTopics with configs, its error codes
// per topic, ValidateOnly, and DeleteTopics.
func TestCreateDeleteTopics(t *testing.T) {
	s, srv := serve(t, nil)
	c := dial(t, srv)
	resp := c.roundTrip(createReq(7, false,
		createTopic("orders", 3, -1, "cleanup.policy", "compact", "retention.ms", "-1", "max.message.bytes", "2048", "message.timestamp.type", "LogAppendTime"),
		createTopic("orders", 1, 1),
		createTopic("bad-rf", 1, 3),
		createTopic("bad-parts", 0, 1),
		createTopic("bad-config", 1, 1, "unclean.leader.election.enable", "true"),
		createTopic("bad-value", 1, 1, "retention.ms", "soon"),
		createTopic("__internal", 1, 1),
		createTopic("defaults", -1, -1),
	)).(*kmsg.CreateTopicsResponse)
	codes := map[string]int16{}
	for i, tt := range resp.Topics {
		if i > 0 && tt.Topic == "orders" {
			codes["orders again"] = tt.ErrorCode
			continue
		}
		codes[tt.Topic] = tt.ErrorCode
	}
	require.Equal(t, map[string]int16{
		"orders": 0, "orders again": 36, "bad-rf": 38, "bad-parts": 37,
		"bad-config": 40, "bad-value": 40, "__internal": 17, "defaults": 0,
	}, codes)
	require.Equal(t, int32(3), resp.Topics[0].NumPartitions)
	require.NotEqual(t, [16]byte{}, resp.Topics[0].TopicID)

	d, err := s.DescribeTopic("orders")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 3)
	require.Equal(t, strata.CleanupCompact, d.Config.CleanupPolicy)
	require.Equal(t, time.Duration(-1), d.Config.Retention)
	require.Equal(t, 2048, d.Config.MaxBatchBytes)
	require.Equal(t, strata.LogAppendTime, d.Config.TimestampType)
	require.Equal(t, []string{"defaults", "orders"}, s.Topics())

	v := c.roundTrip(createReq(4, true, createTopic("checked", 2, 1), createTopic("orders", 1, 1))).(*kmsg.CreateTopicsResponse)
	require.Equal(t, int16(0), v.Topics[0].ErrorCode)
	require.Equal(t, int16(36), v.Topics[1].ErrorCode)
	require.Equal(t, []string{"defaults", "orders"}, s.Topics(), "ValidateOnly creates nothing")

	del := kmsg.NewPtrDeleteTopicsRequest()
	del.SetVersion(5)
	del.TopicNames = []string{"orders", "missing", "__consumer_offsets"}
	dr := c.roundTrip(del).(*kmsg.DeleteTopicsResponse)
	require.Equal(t, int16(0), dr.Topics[0].ErrorCode)
	require.Equal(t, int16(3), dr.Topics[1].ErrorCode)
	require.Equal(t, int16(17), dr.Topics[2].ErrorCode)
	require.Equal(t, []string{"defaults"}, s.Topics())
}

// TestDeleteRecords checks that DeleteRecords moves the start offset (-1
// meaning the high watermark) and answers it, and refuses an offset past
// the end.
func TestDeleteRecords(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 2}))
	for range 3 {
		_, err := s.AppendTo(context.Background(), "events", 0, strata.Record{Value: []byte("v")})
		require.NoError(t, err)
		_, err = s.AppendTo(context.Background(), "events", 1, strata.Record{Value: []byte("v")})
		require.NoError(t, err)
	}
	c := dial(t, srv)
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.SetVersion(2)
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "events"
	for part, off := range []int64{2, -1} {
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = int32(part), off
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = []kmsg.DeleteRecordsRequestTopic{rt}
	resp := c.roundTrip(req).(*kmsg.DeleteRecordsResponse)
	require.Equal(t, int64(2), resp.Topics[0].Partitions[0].LowWatermark)
	require.Equal(t, int64(3), resp.Topics[0].Partitions[1].LowWatermark)
	start, err := s.ListOffsets("events", 0, strata.Earliest)
	require.NoError(t, err)
	require.Equal(t, int64(2), start)

	req.Topics[0].Partitions = req.Topics[0].Partitions[:1]
	req.Topics[0].Partitions[0].Offset = 10
	resp = c.roundTrip(req).(*kmsg.DeleteRecordsResponse)
	require.Equal(t, int16(1), resp.Topics[0].Partitions[0].ErrorCode)
}

// TestDescribeCluster checks the one broker at the advertised address.
func TestDescribeCluster(t *testing.T) {
	_, srv := serve(t, nil)
	c := dial(t, srv)
	req := kmsg.NewPtrDescribeClusterRequest()
	req.SetVersion(1)
	resp := c.roundTrip(req).(*kmsg.DescribeClusterResponse)
	require.Equal(t, int16(0), resp.ErrorCode)
	require.Len(t, resp.Brokers, 1)
	require.Equal(t, srv.Addr().String(), fmt.Sprintf("%s:%d", resp.Brokers[0].Host, resp.Brokers[0].Port))
	req.EndpointType = 2
	resp = c.roundTrip(req).(*kmsg.DescribeClusterResponse)
	require.Equal(t, int16(114), resp.ErrorCode)
}

// TestDescribeConfigs checks a topic's configs as CreateTopics set them,
// the defaults marked, a compression level applying to its own codec only.
func TestDescribeConfigs(t *testing.T) {
	_, srv := serve(t, nil)
	c := dial(t, srv)
	resp := c.roundTrip(createReq(5, false, createTopic("orders", 1, 1,
		"cleanup.policy", "compact", "compression.type", "lz4", "compression.gzip.level", "2", "compression.lz4.level", "5"))).(*kmsg.CreateTopicsResponse)
	require.Equal(t, int16(0), resp.Topics[0].ErrorCode)

	req := kmsg.NewPtrDescribeConfigsRequest()
	req.SetVersion(4)
	for _, name := range []string{"orders", "missing"} {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, name
		req.Resources = append(req.Resources, r)
	}
	broker := kmsg.NewDescribeConfigsRequestResource()
	broker.ResourceType, broker.ResourceName = kmsg.ConfigResourceTypeBroker, "0"
	req.Resources = append(req.Resources, broker)
	dr := c.roundTrip(req).(*kmsg.DescribeConfigsResponse)
	require.Equal(t, int16(0), dr.Resources[0].ErrorCode)
	got := map[string]string{}
	defaults := map[string]bool{}
	for _, e := range dr.Resources[0].Configs {
		got[e.Name] = *e.Value
		defaults[e.Name] = e.Source == kmsg.ConfigSourceDefaultConfig // IsDefault is v0 only
	}
	require.Equal(t, "compact", got["cleanup.policy"])
	require.False(t, defaults["cleanup.policy"])
	require.Equal(t, "lz4", got["compression.type"])
	require.Equal(t, "5", got["compression.lz4.level"])
	require.NotContains(t, got, "compression.gzip.level")
	require.Equal(t, "604800000", got["retention.ms"])
	require.True(t, defaults["retention.ms"])
	require.Equal(t, int16(3), dr.Resources[1].ErrorCode)
	require.Equal(t, int16(0), dr.Resources[2].ErrorCode)

	req.Resources = req.Resources[:1]
	req.Resources[0].ConfigNames = []string{"max.message.bytes"}
	dr = c.roundTrip(req).(*kmsg.DescribeConfigsResponse)
	require.Len(t, dr.Resources[0].Configs, 1)
	require.Equal(t, "1048576", *dr.Resources[0].Configs[0].Value)

	// A small segment.bytes caps max.message.bytes's default: still a
	// default, not set.
	resp = c.roundTrip(createReq(5, false, createTopic("small", 1, 1, "segment.bytes", "65536"))).(*kmsg.CreateTopicsResponse)
	require.Equal(t, int16(0), resp.Topics[0].ErrorCode)
	req.Resources[0].ResourceName = "small"
	req.Resources[0].ConfigNames = []string{"max.message.bytes", "segment.bytes"}
	dr = c.roundTrip(req).(*kmsg.DescribeConfigsResponse)
	require.Len(t, dr.Resources[0].Configs, 2)
	sources := map[string]kmsg.ConfigSource{}
	for _, e := range dr.Resources[0].Configs {
		sources[e.Name] = e.Source
	}
	require.Equal(t, "65536", *dr.Resources[0].Configs[0].Value)
	require.Equal(t, kmsg.ConfigSourceDefaultConfig, sources["max.message.bytes"])
	require.Equal(t, kmsg.ConfigSourceDynamicTopicConfig, sources["segment.bytes"])
}
