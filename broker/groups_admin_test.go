package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratalog/strata"
)

// TestKadmGroups checks kadm's group admin calls against a wire group,
// a group with offsets only and an unknown one: ListGroups (with a state
// filter), DescribeGroups (members, their subscription and assignment),
// FetchOffsets, DeleteOffsets (refused for a subscribed topic) and
// DeleteGroups (refused while the group has members).
func TestKadmGroups(t *testing.T) {
	s, srv := serve(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}))
	require.NoError(t, s.CreateTopic("audit", strata.TopicConfig{}))
	for i := range 20 {
		_, err := s.AppendTo(ctx, "orders", i%2, strata.Record{Value: fmt.Appendf(nil, "order %d", i)})
		require.NoError(t, err)
	}
	_, err := s.AppendTo(ctx, "audit", 0, strata.Record{Value: []byte("a")})
	require.NoError(t, err)
	require.NoError(t, s.Commit("offsets-only", "orders", 0, 3, "by hand"))

	var seen counter
	live := startGroupConsumer(t, srv, "live", "orders", kgo.RangeBalancer(), &seen)
	defer live.stop()
	eventually(t, "the consumer to consume and commit everything", func() bool {
		om0, ok0 := s.Committed("live", "orders", 0)
		om1, ok1 := s.Committed("live", "orders", 1)
		return ok0 && ok1 && om0.Offset == 10 && om1.Offset == 10
	})

	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)

	listed, err := adm.ListGroups(ctx)
	require.NoError(t, err)
	require.Equal(t, "Stable", listed["live"].State)
	require.Equal(t, "consumer", listed["live"].ProtocolType)
	require.Equal(t, "Empty", listed["offsets-only"].State)
	listed, err = adm.ListGroups(ctx, "Empty")
	require.NoError(t, err)
	require.Equal(t, []string{"offsets-only"}, listed.Groups())

	described, err := adm.DescribeGroups(ctx, "live", "offsets-only", "nope")
	require.NoError(t, err)
	d := described["live"]
	require.NoError(t, d.Err)
	require.Equal(t, "Stable", d.State)
	require.Equal(t, "range", d.Protocol)
	require.Len(t, d.Members, 1)
	join, ok := d.Members[0].Join.AsConsumer()
	require.True(t, ok)
	require.Equal(t, []string{"orders"}, join.Topics)
	assigned, ok := d.Members[0].Assigned.AsConsumer()
	require.True(t, ok)
	require.Len(t, assigned.Topics, 1)
	require.ElementsMatch(t, []int32{0, 1}, assigned.Topics[0].Partitions)
	require.Equal(t, "Empty", described["offsets-only"].State)
	require.Equal(t, "Dead", described["nope"].State)

	fetched, err := adm.FetchOffsets(ctx, "offsets-only")
	require.NoError(t, err)
	o, ok := fetched.Lookup("orders", 0)
	require.True(t, ok)
	require.Equal(t, int64(3), o.At)
	require.Equal(t, "by hand", o.Metadata)

	committed, err := adm.CommitOffsets(ctx, "live", kadm.OffsetsFromFetches(kgo.Fetches{}))
	require.NoError(t, err)
	require.NoError(t, committed.Error())
	standalone := kadm.Offsets{}
	standalone.Add(kadm.Offset{Topic: "audit", Partition: 0, At: 1})
	committed, err = adm.CommitOffsets(ctx, "live", standalone)
	require.NoError(t, err)
	require.ErrorIs(t, committed.Error(), kerr.UnknownMemberID, "a standalone commit to a group with members")
	require.NoError(t, s.Commit("live", "audit", 0, 1, ""))

	deleted, err := adm.DeleteOffsets(ctx, "live", kadm.TopicsSet{"orders": {0: {}}, "audit": {0: {}}})
	require.NoError(t, err)
	e, _ := deleted.Lookup("orders", 0)
	require.ErrorIs(t, e, kerr.GroupSubscribedToTopic)
	e, _ = deleted.Lookup("audit", 0)
	require.NoError(t, e)
	_, ok = s.Committed("live", "audit", 0)
	require.False(t, ok, "audit's offset deleted")
	_, ok = s.Committed("live", "orders", 0)
	require.True(t, ok, "orders' offset kept")

	gone, err := adm.DeleteGroups(ctx, "live", "nope")
	require.NoError(t, err)
	require.ErrorIs(t, gone["live"].Err, kerr.NonEmptyGroup)
	require.ErrorIs(t, gone["nope"].Err, kerr.GroupIDNotFound)
	live.stop()
	eventually(t, "the group to be empty", func() bool {
		described, err := adm.DescribeGroups(ctx, "live")
		require.NoError(t, err)
		return described["live"].State == "Empty"
	})
	gone, err = adm.DeleteGroups(ctx, "live")
	require.NoError(t, err)
	require.NoError(t, gone["live"].Err)
	_, ok = s.Committed("live", "orders", 0)
	require.False(t, ok, "the group's offsets deleted")
	require.NotContains(t, s.Groups(), "live")
}

// TestKadmInProcessGroup checks what kadm sees of a group of consumers in
// the process: a Stable consumer group whose members carry their
// subscription and owned partitions in Kafka's consumer protocol
// encoding and the protocol the store records (the assignor), which
// DeleteGroups refuses (NON_EMPTY_GROUP).
func TestKadmInProcessGroup(t *testing.T) {
	s, srv := serve(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}))
	local, err := s.Consumer("local", []string{"orders"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	defer local.Close()
	pollCtx, pollCancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, _ = local.Poll(pollCtx) // takes the partitions; nothing to read
	pollCancel()
	require.Len(t, local.Assignment(), 2)

	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	listed, err := adm.ListGroups(ctx)
	require.NoError(t, err)
	require.Equal(t, "Stable", listed["local"].State)
	described, err := adm.DescribeGroups(ctx, "local")
	require.NoError(t, err)
	d := described["local"]
	require.Equal(t, "Stable", d.State)
	require.Equal(t, "consumer", d.ProtocolType)
	require.Equal(t, "range", d.Protocol, "the assignor, as the store records it")
	require.Len(t, d.Members, 1)
	require.Equal(t, local.MemberID(), d.Members[0].MemberID)
	join, ok := d.Members[0].Join.AsConsumer()
	require.True(t, ok)
	require.Equal(t, []string{"orders"}, join.Topics)
	assigned, ok := d.Members[0].Assigned.AsConsumer()
	require.True(t, ok)
	require.Len(t, assigned.Topics, 1)
	require.Equal(t, []int32{0, 1}, assigned.Topics[0].Partitions)
	gone, err := adm.DeleteGroups(ctx, "local")
	require.NoError(t, err)
	require.ErrorIs(t, gone["local"].Err, kerr.NonEmptyGroup)
}
