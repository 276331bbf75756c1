package broker_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// metadataTopics asks for the metadata of names (every topic for nil) at
// version v and returns the topics' error codes and internal flags by
// name.
func metadataTopics(t *testing.T, c *rawClient, v int16, names []string) map[string][2]any {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(v)
	req.AllowAutoTopicCreation = true
	if names != nil {
		req.Topics = []kmsg.MetadataRequestTopic{}
	}
	for _, n := range names {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, rt)
	}
	resp := c.roundTrip(req).(*kmsg.MetadataResponse)
	got := map[string][2]any{}
	for _, rt := range resp.Topics {
		got[*rt.Topic] = [2]any{rt.ErrorCode, rt.IsInternal}
	}
	return got
}

// TestMetadataInternalTopics checks that a Metadata request for every
// topic lists the store's __consumer_offsets, marked internal, once the
// first commit has created it (kgo's regex consumer and librdkafka's
// pattern subscriptions rely on the flag to skip it), and that naming it
// before then is UNKNOWN_TOPIC_OR_PARTITION, auto-creation or not.
func TestMetadataInternalTopics(t *testing.T) {
	s, srv := serve(t, &broker.Options{AutoCreateTopics: true})
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{}))
	c := dial(t, srv)

	for _, v := range []int16{1, 4, 12} {
		require.Equal(t, map[string][2]any{"orders": {int16(0), false}}, metadataTopics(t, c, v, nil), "v%d", v)
		require.Equal(t, map[string][2]any{strata.ConsumerOffsetsTopic: {int16(3), false}},
			metadataTopics(t, c, v, []string{strata.ConsumerOffsetsTopic}), "v%d", v)
	}
	require.Equal(t, []string{"orders"}, s.Topics(), "nothing created")

	require.NoError(t, s.Commit("g", "orders", 0, 0, ""))
	want := map[string][2]any{"orders": {int16(0), false}, strata.ConsumerOffsetsTopic: {int16(0), true}}
	for _, v := range []int16{1, 4, 12} {
		require.Equal(t, want, metadataTopics(t, c, v, nil), "v%d", v)
	}
	want[strata.ConsumerOffsetsTopic] = [2]any{int16(0), false} // v0 has no IsInternal
	require.Equal(t, want, metadataTopics(t, c, 0, []string{}), "v0: an empty list is every topic")
}

// TestMetadataByTopicID checks that a Metadata request (v12) naming
// topics by id, with null names, describes each by its name, and that an
// unknown id is UNKNOWN_TOPIC_ID with the id, never a created topic.
func TestMetadataByTopicID(t *testing.T) {
	s, srv := serve(t, &broker.Options{AutoCreateTopics: true})
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 3}))
	d, err := s.DescribeTopic("orders")
	require.NoError(t, err)
	c := dial(t, srv)

	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	req.AllowAutoTopicCreation = true
	unknown := [16]byte{1, 2, 3}
	for _, id := range [][16]byte{d.ID, unknown} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.TopicID = id
		req.Topics = append(req.Topics, rt)
	}
	resp := c.roundTrip(req).(*kmsg.MetadataResponse)
	require.Len(t, resp.Topics, 2)
	got := resp.Topics[0]
	require.Equal(t, int16(0), got.ErrorCode)
	require.Equal(t, "orders", *got.Topic)
	require.Equal(t, [16]byte(d.ID), got.TopicID)
	require.Len(t, got.Partitions, 3)
	require.Equal(t, int16(100), resp.Topics[1].ErrorCode)
	require.Equal(t, unknown, resp.Topics[1].TopicID)
	require.Nil(t, resp.Topics[1].Topic)
	require.Equal(t, []string{"orders"}, s.Topics())
}

// TestAuthorizedOperations checks the authorized operations of Metadata,
// DescribeCluster and DescribeGroups: all of Kafka's for the resource type
// when asked for, as a Kafka broker without an authorizer gives them
// (kadm decodes them), and omitted otherwise.
func TestAuthorizedOperations(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{}))
	c := dial(t, srv)
	topicOps := []kadm.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate,
		kmsg.ACLOperationDelete, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe,
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs}
	clusterOps := []kadm.ACLOperation{kmsg.ACLOperationCreate, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe,
		kmsg.ACLOperationClusterAction, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs,
		kmsg.ACLOperationIdempotentWrite}
	const omitted = int32(-1 << 31)

	for _, v := range []int16{8, 10, 12} {
		for _, ask := range []bool{false, true} {
			req := kmsg.NewPtrMetadataRequest()
			req.SetVersion(v)
			req.IncludeClusterAuthorizedOperations, req.IncludeTopicAuthorizedOperations = ask, ask
			resp := c.roundTrip(req).(*kmsg.MetadataResponse)
			require.Len(t, resp.Topics, 1)
			if !ask {
				require.Equal(t, omitted, resp.Topics[0].AuthorizedOperations, "v%d", v)
				require.Equal(t, omitted, resp.AuthorizedOperations, "v%d", v)
				continue
			}
			require.Equal(t, topicOps, kadm.DecodeACLOperations(resp.Topics[0].AuthorizedOperations), "v%d", v)
			if v <= 10 {
				require.Equal(t, clusterOps, kadm.DecodeACLOperations(resp.AuthorizedOperations), "v%d", v)
			}
		}
	}

	for _, ask := range []bool{false, true} {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.SetVersion(1)
		req.IncludeClusterAuthorizedOperations = ask
		resp := c.roundTrip(req).(*kmsg.DescribeClusterResponse)
		if !ask {
			require.Equal(t, omitted, resp.ClusterAuthorizedOperations)
			continue
		}
		require.Equal(t, clusterOps, kadm.DecodeACLOperations(resp.ClusterAuthorizedOperations))
	}

	require.NoError(t, s.Commit("g", "orders", 0, 0, ""))
	for _, ask := range []bool{false, true} {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.SetVersion(5)
		req.Groups = []string{"g", "none"}
		req.IncludeAuthorizedOperations = ask
		resp := c.roundTrip(req).(*kmsg.DescribeGroupsResponse)
		require.Len(t, resp.Groups, 2)
		for _, g := range resp.Groups {
			if !ask {
				require.Equal(t, omitted, g.AuthorizedOperations, g.Group)
				continue
			}
			require.Equal(t, []kadm.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationDelete, kmsg.ACLOperationDescribe},
				kadm.DecodeACLOperations(g.AuthorizedOperations), g.Group)
		}
	}
}

// TestFindCoordinatorCreatesOffsetsTopic checks that a FindCoordinator
// for a group has the store create __consumer_offsets, which Metadata
// then lists as internal, as Kafka creates its own then (kgo's
// TestConsumeRegex looks for it), and that one for a transactional id
// does not.
func TestFindCoordinatorCreatesOffsetsTopic(t *testing.T) {
	s, srv := serve(t, nil)
	c := dial(t, srv)
	find := func(typ int8) {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.SetVersion(4)
		req.CoordinatorType = typ
		req.CoordinatorKeys = []string{"g"}
		resp := c.roundTrip(req).(*kmsg.FindCoordinatorResponse)
		require.Equal(t, int16(0), resp.Coordinators[0].ErrorCode)
	}
	find(1)
	_, err := s.DescribeTopic(strata.ConsumerOffsetsTopic)
	require.ErrorIs(t, err, strata.ErrUnknownTopic, "a transactional id's")
	find(0)
	_, err = s.DescribeTopic(strata.ConsumerOffsetsTopic)
	require.NoError(t, err)
	require.Equal(t, map[string][2]any{strata.ConsumerOffsetsTopic: {int16(0), true}}, metadataTopics(t, c, 12, nil))
}
