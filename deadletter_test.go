package strata_test

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

func TestDeadLetter(t *testing.T) {
	clk := newFakeClock()
	s := stratatest.Open(t, &strata.Options{Now: clk.Now})
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}))
	require.NoError(t, s.CreateTopic("other", strata.TopicConfig{}))
	stamp := clk.Now().Add(-time.Minute)
	poison := strata.Record{Key: []byte("k"), Value: []byte("{bad json"), Timestamp: stamp,
		Headers: []strata.Header{{Key: "trace", Value: []byte("abc")}, {Key: strata.HeaderErrorTopic, Value: []byte("first")}}}
	_, err := s.AppendTo(ctx, "orders", 1, rec("k", "fine"), poison, rec("k", "after"))
	require.NoError(t, err)
	_, err = s.AppendTo(ctx, "other", 0, rec("k", "x"))
	require.NoError(t, err)

	c, err := s.Consumer("g", []string{"orders"}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	require.NoError(t, err)
	defer c.Close()
	msgs := pollOne(t, c)
	require.Len(t, msgs, 3)
	m := msgs[1]
	cause := errors.New("unexpected end of JSON input")

	t.Run("bad input appends and commits nothing", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			topic string
			m     strata.Message
			want  error
		}{
			{"own topic", "orders", m, strata.ErrInvalidConfig},
			{"invalid name", "bad name!", m, strata.ErrInvalidTopic},
			{"internal", "__dlq", m, strata.ErrReservedTopic},
			{"not owned", "dlq", strata.Message{Topic: "other", Partition: 0}, strata.ErrNotOwner},
			{"past the end", "dlq", strata.Message{Topic: "orders", Partition: 1, Record: strata.Record{Offset: 3}}, strata.ErrOffsetOutOfRange},
			{"negative offset", "dlq", strata.Message{Topic: "orders", Partition: 1, Record: strata.Record{Offset: -7}}, strata.ErrOffsetOutOfRange},
			{"offset MaxInt64", "dlq", strata.Message{Topic: "orders", Partition: 1, Record: strata.Record{Offset: math.MaxInt64}}, strata.ErrOffsetOutOfRange},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := c.DeadLetter(ctx, tc.topic, tc.m, cause)
				require.ErrorIs(t, err, tc.want)
				requireSentinelTextsOnce(t, err)
				if tc.want == strata.ErrOffsetOutOfRange {
					require.Contains(t, err.Error(), fmt.Sprintf("offset %d to", tc.m.Offset), "the message's own offset")
					require.Contains(t, err.Error(), "out of range [0, 3)")
				}
				_, err = s.DescribeTopic("dlq")
				require.ErrorIs(t, err, strata.ErrUnknownTopic)
				_, ok := s.Committed("g", "orders", 1)
				require.False(t, ok)
			})
		}
	})

	clk.Add(time.Second)
	require.NoError(t, c.DeadLetter(ctx, "dlq", m, cause))
	d, err := s.DescribeTopic("dlq")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 1, "created with one partition, as Kafka Connect creates its queue")
	om, ok := s.Committed("g", "orders", 1)
	require.True(t, ok)
	require.Equal(t, m.Offset+1, om.Offset, "committed past the poison record")

	recs, err := s.Read(ctx, "dlq", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	dl := recs[0]
	require.Equal(t, "k", string(dl.Key))
	require.Equal(t, "{bad json", string(dl.Value))
	require.Equal(t, stamp.UnixMilli(), dl.Timestamp.UnixMilli(), "the original timestamp, as Connect keeps it")
	var headers [][2]string
	for _, h := range dl.Headers {
		headers = append(headers, [2]string{h.Key, string(h.Value)})
	}
	require.Equal(t, [][2]string{
		{"trace", "abc"},
		{"__connect.errors.topic", "first"},  // the record's own, kept
		{"__connect.errors.topic", "orders"}, // then every header of this failure, as Connect appends them
		{"__connect.errors.partition", "1"},
		{"__connect.errors.offset", "1"},
		{"__connect.errors.exception.class.name", "*errors.errorString"},
		{"__connect.errors.exception.message", "unexpected end of JSON input"},
		{"__strata.errors.timestamp", strconv.FormatInt(clk.Now().UnixMilli(), 10)},
	}, headers)
	require.Equal(t, "trace", m.Headers[0].Key, "the message's own headers are untouched")
	require.Len(t, m.Headers, 2)

	// An existing topic is used as it is; a nil cause adds no error headers.
	require.NoError(t, s.CreateTopic("dlq3", strata.TopicConfig{Partitions: 3}))
	require.NoError(t, c.DeadLetter(ctx, "dlq3", msgs[2], nil))
	d, err = s.DescribeTopic("dlq3")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 3)
	om, _ = s.Committed("g", "orders", 1)
	require.Equal(t, int64(3), om.Offset)
	var found []strata.Record
	for p := range 3 {
		recs, err := s.Read(ctx, "dlq3", p, 0, 10)
		require.NoError(t, err)
		found = append(found, recs...)
	}
	require.Len(t, found, 1)
	for _, h := range found[0].Headers {
		require.NotEqual(t, strata.HeaderErrorMessage, h.Key)
		require.NotEqual(t, strata.HeaderErrorClass, h.Key)
	}
}
