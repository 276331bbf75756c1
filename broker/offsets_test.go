package broker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

func commitReq(group, member string, generation int32, topic string, offset int64, metadata string) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.SetVersion(8)
	req.Group, req.MemberID, req.Generation = group, member, generation
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Offset, rp.Metadata = offset, &metadata
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// TestOffsetCommitFetch checks standalone commits over the wire: they
// reach the store's __consumer_offsets (Store.Committed), round-trip their
// metadata through OffsetFetch, and bad ones get Kafka's codes.
func TestOffsetCommitFetch(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	_, err := s.AppendTo(context.Background(), "events", 0, strata.Record{Value: []byte("a")}, strata.Record{Value: []byte("b")})
	require.NoError(t, err)
	c := dial(t, srv)
	for _, tt := range []struct {
		name       string
		group      string
		member     string
		generation int32
		topic      string
		offset     int64
		metadata   string
		code       int16
	}{
		{"ok", "g", "", -1, "events", 1, "meta data ✓", 0},
		{"member", "g", "m-1", 2, "events", 1, "", 25},
		{"generation", "g", "", 3, "events", 1, "", 25},
		{"no group", "", "", -1, "events", 1, "", 24},
		{"past the end", "g", "", -1, "events", 5, "", 1},
		{"unknown topic", "g", "", -1, "missing", 0, "", 3},
		{"metadata too large", "g", "", -1, "events", 1, strings.Repeat("x", 5000), 12},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := c.roundTrip(commitReq(tt.group, tt.member, tt.generation, tt.topic, tt.offset, tt.metadata)).(*kmsg.OffsetCommitResponse)
			require.Equal(t, tt.code, resp.Topics[0].Partitions[0].ErrorCode)
		})
	}
	om, ok := s.Committed("g", "events", 0)
	require.True(t, ok)
	require.Equal(t, int64(1), om.Offset)
	require.Equal(t, "meta data ✓", om.Metadata)

	require.NoError(t, s.Commit("other", "events", 0, 2, "in-process"))
	for _, group := range []string{"g", "other"} {
		for _, all := range []bool{false, true} {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.SetVersion(7)
			req.Group = group
			if !all {
				rt := kmsg.NewOffsetFetchRequestTopic()
				rt.Topic, rt.Partitions = "events", []int32{0}
				req.Topics = append(req.Topics, rt)
			}
			resp := c.roundTrip(req).(*kmsg.OffsetFetchResponse)
			require.Equal(t, int16(0), resp.ErrorCode)
			require.Len(t, resp.Topics, 1)
			p := resp.Topics[0].Partitions[0]
			want, _ := s.Committed(group, "events", 0)
			require.Equal(t, want.Offset, p.Offset)
			require.Equal(t, want.Metadata, *p.Metadata)
		}
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.SetVersion(1)
	req.Group = "none"
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = "events", []int32{0}
	req.Topics = append(req.Topics, rt)
	p := c.roundTrip(req).(*kmsg.OffsetFetchResponse).Topics[0].Partitions[0]
	require.Equal(t, int64(-1), p.Offset)
}
