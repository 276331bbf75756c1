package watermill_test

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stratalog/strata"
	"github.com/stretchr/testify/require"

	stratawm "github.com/stratalog/strata/watermill"
)

// TestRecordsAsKafkaHas: a published message is the record
// watermill-kafka's DefaultMarshaler makes (value, the UUID header, a
// header per metadata entry), and a record so written by another producer
// is delivered with its UUID and metadata, and its place in the context.
func TestRecordsAsKafkaHas(t *testing.T) {
	st := openStore(t)
	pub, err := stratawm.NewPublisher(st, stratawm.PublisherConfig{}, nil)
	require.NoError(t, err)
	msg := message.NewMessage("uuid-1", []byte(`{"id":1}`))
	msg.Metadata.Set("name", "OrderPlaced")
	msg.Metadata.Set("correlation_id", "c-9")
	require.NoError(t, pub.Publish("orders", msg))
	require.NoError(t, pub.Close())
	require.ErrorIs(t, pub.Publish("orders", msg), stratawm.ErrPublisherClosed)

	recs, err := st.Read(context.Background(), "orders", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Nil(t, recs[0].Key)
	require.Equal(t, []byte(`{"id":1}`), recs[0].Value)
	require.Equal(t, []strata.Header{
		{Key: stratawm.UUIDHeaderKey, Value: []byte("uuid-1")},
		{Key: "correlation_id", Value: []byte("c-9")},
		{Key: "name", Value: []byte("OrderPlaced")},
	}, recs[0].Headers)

	ts := time.UnixMilli(1700000000000).UTC()
	_, err = st.Append(context.Background(), "orders", strata.Record{
		Key: []byte("k"), Value: []byte("v"), Timestamp: ts,
		Headers: []strata.Header{{Key: "a", Value: []byte("1")}, {Key: stratawm.UUIDHeaderKey, Value: []byte("uuid-2")}},
	})
	require.NoError(t, err)

	sub := newSubscriber(t, st, "")
	defer func() { require.NoError(t, sub.Close()) }()
	ch, err := sub.Subscribe(context.Background(), "orders")
	require.NoError(t, err)
	first := next(t, ch)
	require.True(t, first.Equals(msg), "got %v", first)
	first.Ack()
	second := next(t, ch)
	require.Equal(t, "uuid-2", second.UUID)
	require.Equal(t, message.Metadata{"a": "1"}, second.Metadata)
	require.Equal(t, []byte("v"), []byte(second.Payload))
	p, ok := stratawm.MessagePartitionFromCtx(second.Context())
	require.True(t, ok)
	require.Equal(t, 0, p)
	off, ok := stratawm.MessagePartitionOffsetFromCtx(second.Context())
	require.True(t, ok)
	require.Equal(t, int64(1), off)
	gotTS, ok := stratawm.MessageTimestampFromCtx(second.Context())
	require.True(t, ok)
	require.True(t, ts.Equal(gotTS))
	key, ok := stratawm.MessageKeyFromCtx(second.Context())
	require.True(t, ok)
	require.Equal(t, []byte("k"), key)
	second.Ack()
}

// TestReservedMetadata: metadata named as the UUID header is refused and
// nothing is published.
func TestReservedMetadata(t *testing.T) {
	st := openStore(t)
	pub, err := stratawm.NewPublisher(st, stratawm.PublisherConfig{}, nil)
	require.NoError(t, err)
	good := message.NewMessage("a", []byte("x"))
	bad := message.NewMessage("b", []byte("x"))
	bad.Metadata.Set(stratawm.UUIDHeaderKey, "c")
	require.ErrorContains(t, pub.Publish("orders", good, bad), "reserved")
	_, err = st.ListOffsets("orders", 0, strata.Latest)
	require.ErrorIs(t, err, strata.ErrUnknownTopic)
}

// TestPartitioningKey: the partitioning marshaler's key places a message
// where Kafka's partitioner places the key, and keeps a key's messages in
// order.
func TestPartitioningKey(t *testing.T) {
	st := openStore(t)
	marshaler := stratawm.NewWithPartitioningMarshaler(func(_ string, msg *message.Message) (string, error) {
		return msg.Metadata.Get("customer"), nil
	})
	pub, err := stratawm.NewPublisher(st, stratawm.PublisherConfig{
		Marshaler: marshaler,
		Topic:     strata.TopicConfig{Partitions: 6},
	}, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, pub.Close()) }()
	customers := []string{"alice", "bob", "carol", "dave"}
	for i := range 40 {
		msg := message.NewMessage(string(rune('A'+i%26))+customers[i%4], nil)
		msg.Metadata.Set("customer", customers[i%4])
		msg.Metadata.Set("seq", string(rune('0'+i/4)))
		require.NoError(t, pub.Publish("payments", msg))
	}
	for _, c := range customers {
		want, err := st.PartitionFor("payments", []byte(c))
		require.NoError(t, err)
		var seqs []string
		for rec, err := range st.Scan("payments", want, 0) {
			require.NoError(t, err)
			if string(rec.Key) == c {
				m, err := marshaler.Unmarshal(strata.Message{Topic: "payments", Partition: want, Record: rec})
				require.NoError(t, err)
				seqs = append(seqs, m.Metadata.Get("seq"))
			}
		}
		require.Equal(t, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}, seqs, "customer %s", c)
	}
}
