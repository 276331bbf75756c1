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
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
	"github.com/stratalog/strata/topic"
)

// adminClient returns a kadm client of srv, closed when the test ends.
func adminClient(t *testing.T, srv *broker.Server, opts ...kgo.Opt) (*kadm.Client, *kgo.Client) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(srv.Addr().String())}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl), cl
}

// TestKadmCreatePartitions grows a topic with kadm: the store has the
// new partitions, a kgo producer made before routes keys over the new
// count once its metadata is refreshed, and a kgo consumer reads the new
// partitions; a smaller or equal count is INVALID_PARTITIONS, an unknown
// topic UNKNOWN_TOPIC_OR_PARTITION, and ValidateOnly changes nothing.
func TestKadmCreatePartitions(t *testing.T) {
	s, srv := serve(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm, _ := adminClient(t, srv)
	_, err := adm.CreateTopic(ctx, 2, 1, nil, "orders")
	require.NoError(t, err)
	producer, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.DefaultProduceTopic("orders"),
		kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(200*time.Millisecond))
	require.NoError(t, err)
	defer producer.Close()
	require.NoError(t, producer.ProduceSync(ctx, &kgo.Record{Key: []byte("k"), Value: []byte("before")}).FirstErr())

	v, err := adm.ValidateCreatePartitions(ctx, 3, "orders")
	require.NoError(t, err)
	require.NoError(t, v.Error())
	d, err := s.DescribeTopic("orders")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 2, "ValidateOnly adds nothing")

	r, err := adm.CreatePartitions(ctx, 3, "orders")
	require.NoError(t, err)
	require.NoError(t, r.Error())
	d, err = s.DescribeTopic("orders")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 5)

	for _, set := range []int{5, 4} {
		r, err = adm.UpdatePartitions(ctx, set, "orders")
		require.NoError(t, err)
		require.ErrorIs(t, r.Error(), kerr.InvalidPartitions, "set %d", set)
	}
	r, err = adm.UpdatePartitions(ctx, topic.MaxPartitions+1, "orders")
	require.NoError(t, err)
	require.ErrorIs(t, r.Error(), kerr.InvalidPartitions)
	resp := rawCreatePartitions(t, srv, "missing", 3)
	require.Equal(t, kerr.UnknownTopicOrPartition.Code, resp.Topics[0].ErrorCode)
	resp = rawCreatePartitions(t, srv, "__consumer_offsets", 60)
	require.Equal(t, kerr.InvalidTopicException.Code, resp.Topics[0].ErrorCode)

	// The producer made before sees the new partitions once its metadata
	// is refreshed: a key of a new partition goes there.
	key := ""
	for i := 0; key == ""; i++ {
		if k := fmt.Sprint("key-", i); topic.KeyPartition([]byte(k), 5) >= 2 {
			key = k
		}
	}
	want := int32(topic.KeyPartition([]byte(key), 5))
	for {
		rec := &kgo.Record{Key: []byte(key), Value: []byte("after")}
		require.NoError(t, producer.ProduceSync(ctx, rec).FirstErr())
		if rec.Partition == want {
			break
		}
		require.NoError(t, ctx.Err(), "the producer never routed to the new partitions")
		time.Sleep(50 * time.Millisecond)
	}
	end, err := s.ListOffsets("orders", int(want), strata.Latest)
	require.NoError(t, err)
	require.Positive(t, end)

	consumer, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer consumer.Close()
	for seen := false; !seen; {
		fs := consumer.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		fs.EachError(func(topic string, p int32, err error) { require.NoError(t, err, "%s-%d", topic, p) })
		fs.EachRecord(func(r *kgo.Record) { seen = seen || r.Partition == want })
	}
}

// rawCreatePartitions sends a CreatePartitions (v3) for one topic.
func rawCreatePartitions(t *testing.T, srv *broker.Server, name string, count int32) *kmsg.CreatePartitionsResponse {
	c := dial(t, srv)
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.SetVersion(3)
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic, rt.Count = name, count
	req.Topics = append(req.Topics, rt)
	return c.roundTrip(req).(*kmsg.CreatePartitionsResponse)
}

// TestCreatePartitionsRequests checks what kadm does not send: a manual
// assignment (broker 0 for each new partition, else
// INVALID_REPLICA_ASSIGNMENT), a topic named twice (INVALID_REQUEST),
// and v0.
func TestCreatePartitionsRequests(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("a", strata.TopicConfig{}))
	require.NoError(t, s.CreateTopic("b", strata.TopicConfig{}))
	c := dial(t, srv)
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.SetVersion(0)
	topicReq := func(name string, count int32, replicas ...[]int32) kmsg.CreatePartitionsRequestTopic {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = name, count
		for _, r := range replicas {
			a := kmsg.NewCreatePartitionsRequestTopicAssignment()
			a.Replicas = r
			rt.Assignment = append(rt.Assignment, a)
		}
		return rt
	}
	req.Topics = []kmsg.CreatePartitionsRequestTopic{
		topicReq("a", 3, []int32{0}, []int32{0}),
		topicReq("b", 3, []int32{0}),
		topicReq("dup", 2), topicReq("dup", 3),
	}
	resp := c.roundTrip(req).(*kmsg.CreatePartitionsResponse)
	codes := []int16{}
	for _, rt := range resp.Topics {
		codes = append(codes, rt.ErrorCode)
	}
	require.Equal(t, []int16{0, kerr.InvalidReplicaAssignment.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code}, codes)
	require.NotNil(t, resp.Topics[1].ErrorMessage)
	for name, want := range map[string]int{"a": 3, "b": 1} {
		d, err := s.DescribeTopic(name)
		require.NoError(t, err)
		require.Len(t, d.Partitions, want, name)
	}
}

// configsOf returns a topic's configs by name as kadm describes them.
func configsOf(t *testing.T, ctx context.Context, adm *kadm.Client, name string) map[string]kadm.Config {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(ctx, name)
	require.NoError(t, err)
	rc, err := rcs.On(name, nil)
	require.NoError(t, err)
	require.NoError(t, rc.Err)
	out := map[string]kadm.Config{}
	for _, c := range rc.Configs {
		out[c.Key] = c
	}
	return out
}

func ptr(s string) *string { return &s }

func val(c kadm.Config) string { return c.MaybeValue() }

// TestKadmTopicConfigs alters a topic's configs with kadm's incremental
// and legacy calls and reads them back with DescribeTopicConfigs (values,
// sources, synonyms) and the store; a config that cannot change, one
// Strata does not have, a bad value or an APPEND to a non-list config is
// INVALID_CONFIG with a message, and changes nothing.
func TestKadmTopicConfigs(t *testing.T) {
	s, srv := serve(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm, _ := adminClient(t, srv)
	created, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.ms": ptr("3600000"), "cleanup.policy": ptr("compact,delete")}, "cfg")
	require.NoError(t, err)
	require.NoError(t, created.Err)
	require.Equal(t, "3600000", val(created.Configs["retention.ms"]), "CreateTopics v5+ returns the configs")
	require.Equal(t, kmsg.ConfigSourceDynamicTopicConfig, created.Configs["retention.ms"].Source)
	require.Equal(t, "1073741824", val(created.Configs["segment.bytes"]))

	cs := configsOf(t, ctx, adm, "cfg")
	require.Equal(t, "3600000", val(cs["retention.ms"]))
	require.Equal(t, kmsg.ConfigSourceDynamicTopicConfig, cs["retention.ms"].Source)
	require.Equal(t, []string{"retention.ms", "log.retention.ms"}, synonymNames(cs["retention.ms"]))
	require.Equal(t, "604800000", *cs["retention.ms"].Synonyms[1].Value)
	require.Equal(t, kmsg.ConfigSourceDefaultConfig, cs["segment.bytes"].Source)
	require.Equal(t, []string{"log.segment.bytes"}, synonymNames(cs["segment.bytes"]))

	alter := func(validate bool, configs ...kadm.AlterConfig) error {
		call := adm.AlterTopicConfigs
		if validate {
			call = adm.ValidateAlterTopicConfigs
		}
		r, err := call(ctx, configs, "cfg")
		require.NoError(t, err)
		require.Len(t, r, 1)
		if r[0].Err != nil {
			return fmt.Errorf("%w: %s", r[0].Err, r[0].ErrMessage)
		}
		return nil
	}
	require.NoError(t, alter(true, kadm.AlterConfig{Name: "retention.ms", Value: ptr("1")}))
	require.Equal(t, "3600000", val(configsOf(t, ctx, adm, "cfg")["retention.ms"]), "ValidateOnly changes nothing")

	require.NoError(t, alter(false,
		kadm.AlterConfig{Name: "retention.ms", Value: ptr("7200000")},
		kadm.AlterConfig{Name: "retention.bytes", Value: ptr("1000000")},
		kadm.AlterConfig{Name: "min.cleanable.dirty.ratio", Value: ptr("0.25")},
		kadm.AlterConfig{Name: "cleanup.policy", Value: ptr("compact,delete")}, // as it is
	))
	d, err := s.DescribeTopic("cfg")
	require.NoError(t, err)
	require.Equal(t, 2*time.Hour, d.Config.Retention)
	require.Equal(t, int64(1000000), d.Config.RetentionBytes)
	require.Equal(t, 0.25, d.Config.MinCleanableDirtyRatio)
	cs = configsOf(t, ctx, adm, "cfg")
	require.Equal(t, "7200000", val(cs["retention.ms"]))
	require.Equal(t, kmsg.ConfigSourceDynamicTopicConfig, cs["retention.bytes"].Source)

	for _, tc := range []struct {
		ac   kadm.AlterConfig
		says string
	}{
		{kadm.AlterConfig{Name: "segment.bytes", Value: ptr("1048576")}, "segment.bytes cannot change"},
		{kadm.AlterConfig{Name: "cleanup.policy", Op: kadm.SubtractConfig, Value: ptr("delete")}, "cleanup.policy cannot change"},
		{kadm.AlterConfig{Name: "cleanup.policy", Op: kadm.SubtractConfig, Value: ptr("compact,delete")}, "would be empty"},
		{kadm.AlterConfig{Name: "unclean.leader.election.enable", Value: ptr("true")}, "not one Strata has"},
		{kadm.AlterConfig{Name: "retention.ms", Value: ptr("soon")}, "retention.ms"},
		{kadm.AlterConfig{Name: "retention.ms", Value: ptr("-7")}, "retention"},
		{kadm.AlterConfig{Name: "retention.ms", Op: kadm.AppendConfig, Value: ptr("1")}, "only a list config"},
	} {
		for _, validate := range []bool{false, true} {
			err := alter(validate, tc.ac, kadm.AlterConfig{Name: "retention.bytes", Value: ptr("5")})
			require.ErrorIs(t, err, kerr.InvalidConfig, "%+v", tc.ac)
			require.ErrorContains(t, err, tc.says)
		}
	}
	d2, err := s.DescribeTopic("cfg")
	require.NoError(t, err)
	require.Equal(t, d.Config, d2.Config, "the refused changes changed nothing")

	require.NoError(t, alter(false, kadm.AlterConfig{Name: "retention.ms", Op: kadm.DeleteConfig}))
	cs = configsOf(t, ctx, adm, "cfg")
	require.Equal(t, "604800000", val(cs["retention.ms"]))
	require.Equal(t, kmsg.ConfigSourceDefaultConfig, cs["retention.ms"].Source)
	require.Equal(t, "1000000", val(cs["retention.bytes"]), "the configs not named stay")

	// AlterConfigs replaces: the live configs not named go back to their
	// defaults.
	r, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: ptr("60000")}}, "cfg")
	require.NoError(t, err)
	require.NoError(t, r[0].Err)
	d, err = s.DescribeTopic("cfg")
	require.NoError(t, err)
	require.Equal(t, time.Minute, d.Config.Retention)
	require.Equal(t, int64(-1), d.Config.RetentionBytes)
	require.Equal(t, 0.5, d.Config.MinCleanableDirtyRatio)
	require.Equal(t, strata.CleanupCompactDelete, d.Config.CleanupPolicy, "a fixed config stays")
	r, err = adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "preallocate", Value: ptr("true")}}, "cfg")
	require.NoError(t, err)
	require.ErrorIs(t, r[0].Err, kerr.InvalidConfig)

	// The broker's configs: described, not altered.
	brokers, err := adm.DescribeBrokerConfigs(ctx)
	require.NoError(t, err)
	bc, err := brokers.On("", nil)
	require.NoError(t, err)
	got := map[string]string{}
	for _, c := range bc.Configs {
		got[c.Key] = c.MaybeValue()
	}
	require.Equal(t, "604800000", got["log.retention.ms"])
	require.Equal(t, "1", got["default.replication.factor"])
	require.Equal(t, "false", got["auto.create.topics.enable"])
	ar, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.retention.ms", Value: ptr("1")}}, 0)
	require.NoError(t, err)
	require.ErrorIs(t, ar[0].Err, kerr.InvalidConfig)
}

func synonymNames(c kadm.Config) []string {
	var out []string
	for _, s := range c.Synonyms {
		out = append(out, s.Key)
	}
	return out
}

// TestKadmListOffsets lists offsets with kadm: by time (the record found
// and its own timestamp), the max timestamp, start and end, and the end
// under read_committed (the last stable offset).
func TestKadmListOffsets(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("times", strata.TopicConfig{MaxBatchBytes: 256}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for _, m := range []int{0, 1, 2, 5, 3} {
		_, err := s.AppendTo(ctx, "times", 0, strata.Record{Value: []byte("v"), Timestamp: t0.Add(time.Duration(m) * time.Minute)})
		require.NoError(t, err)
	}
	txn, err := s.BeginTxn(ctx, strata.TxnOptions{ID: "open"})
	require.NoError(t, err)
	defer txn.Abort(ctx)
	for range 3 { // the small batches write them
		require.NoError(t, txn.AppendTo(ctx, "times", 0, strata.Record{Value: make([]byte, 100), Timestamp: t0.Add(10 * time.Minute)}))
	}
	adm, _ := adminClient(t, srv)

	at := func(l kadm.ListedOffsets, err error) kadm.ListedOffset {
		t.Helper()
		require.NoError(t, err)
		o, ok := l.Lookup("times", 0)
		require.True(t, ok)
		require.NoError(t, o.Err)
		return o
	}
	o := at(adm.ListOffsetsAfterMilli(ctx, t0.Add(90*time.Second).UnixMilli(), "times"))
	require.Equal(t, int64(2), o.Offset)
	require.Equal(t, t0.Add(2*time.Minute).UnixMilli(), o.Timestamp)
	o = at(adm.ListMaxTimestampOffsets(ctx, "times"))
	require.Equal(t, int64(5), o.Offset, "the open transaction's records are visible read_uncommitted")
	require.Equal(t, t0.Add(10*time.Minute).UnixMilli(), o.Timestamp)
	require.Equal(t, int64(0), at(adm.ListStartOffsets(ctx, "times")).Offset)
	end := at(adm.ListEndOffsets(ctx, "times")).Offset
	require.Greater(t, end, int64(5))
	require.Equal(t, int64(5), at(adm.ListCommittedOffsets(ctx, "times")).Offset, "the last stable offset")
}

// TestListOffsetsSpecial checks the special timestamps at the versions
// that have them: -3 (max timestamp, v7+), -4 (earliest local, v8+), -5
// (latest tiered, v9+: none here), UNSUPPORTED_VERSION below, and -3 under
// read_committed, which leaves out an open transaction's records.
func TestListOffsetsSpecial(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	ctx := context.Background()
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for _, m := range []int{0, 4, 2} {
		_, err := s.AppendTo(ctx, "events", 0, strata.Record{Value: []byte("x"), Timestamp: t0.Add(time.Duration(m) * time.Minute)})
		require.NoError(t, err)
	}
	require.NoError(t, s.DeleteRecords("events", 0, 1))
	c := dial(t, srv)
	listOffset := func(version int16, isolation int8, ts int64) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		req.SetVersion(version)
		req.IsolationLevel = isolation
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "events"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = ts
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return c.roundTrip(req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	}
	for _, tt := range []struct {
		version int16
		ts      int64
		code    int16
		offset  int64
		stamp   int64
	}{
		{7, -3, 0, 1, t0.Add(4 * time.Minute).UnixMilli()},
		{6, -3, kerr.UnsupportedVersion.Code, -1, -1},
		{8, -4, 0, 1, -1},
		{7, -4, kerr.UnsupportedVersion.Code, -1, -1},
		{9, -5, 0, -1, -1},
		{8, -5, kerr.UnsupportedVersion.Code, -1, -1},
		{10, -6, kerr.UnsupportedVersion.Code, -1, -1},
		{10, t0.Add(3 * time.Minute).UnixMilli(), 0, 1, t0.Add(4 * time.Minute).UnixMilli()},
		{10, -2, 0, 1, -1},
		{10, -1, 0, 3, -1},
	} {
		p := listOffset(tt.version, 0, tt.ts)
		require.Equal(t, tt.code, p.ErrorCode, "v%d %d", tt.version, tt.ts)
		require.Equal(t, tt.offset, p.Offset, "v%d %d", tt.version, tt.ts)
		require.Equal(t, tt.stamp, p.Timestamp, "v%d %d", tt.version, tt.ts)
	}

	// An open transaction's later record is the max timestamp under
	// read_uncommitted only.
	w := newWireTxn(t, c, "open")
	w.add("events", 0)
	code, base := w.produce("events", 0, 0, "now")
	require.Equal(t, int16(0), code)
	require.Equal(t, int64(3), base)
	for _, tt := range []struct {
		isolation int8
		offset    int64
	}{
		{0, 3},
		{1, 1},
	} {
		p := listOffset(7, tt.isolation, -3)
		require.Equal(t, int16(0), p.ErrorCode, "isolation %d", tt.isolation)
		require.Equal(t, tt.offset, p.Offset, "isolation %d", tt.isolation)
		if tt.offset == 1 {
			require.Equal(t, t0.Add(4*time.Minute).UnixMilli(), p.Timestamp, "isolation %d", tt.isolation)
		} else {
			require.Greater(t, p.Timestamp, t0.Add(4*time.Minute).UnixMilli(), "isolation %d", tt.isolation)
		}
	}
	require.Equal(t, int16(0), w.end(false))
}
