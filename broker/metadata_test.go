package broker_test

import (
	"testing"

	"github.com/stretchr/testify/require"
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
