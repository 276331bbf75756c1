package broker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
)

// saramaConfig is Sarama's configuration for the listener: Kafka 2.8
// (Sarama's default), whose request versions are inside the ranges the
// listener advertises (ApiVersions 3, Metadata 11, Produce 9, Fetch 12,
// ListOffsets 6, InitProducerId 4, CreateTopics 7, DescribeConfigs 4)
// but for DeleteTopics 6, which Sarama lowers to the advertised 5 after
// ApiVersions; and an idempotent producer, which needs one request in
// flight and acks from all replicas.
func saramaConfig() *sarama.Config {
	c := sarama.NewConfig()
	c.Version = sarama.V2_8_0_0
	c.ClientID = "sarama-test"
	c.Producer.Idempotent = true
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Retry.Max = 3
	c.Producer.Return.Successes = true
	c.Net.MaxOpenRequests = 1
	c.Metadata.Retry.Backoff = 10 * time.Millisecond
	c.Producer.Retry.Backoff = 10 * time.Millisecond
	return c
}

// TestSarama drives IBM's Sarama against the listener and checks each
// step from the store's side: the ClusterAdmin's CreateTopic, ListTopics,
// DescribeConfigs and DeleteTopic; an idempotent SyncProducer in each codec
// Sarama has, placing keys with its murmur2 partitioner where
// Store.PartitionFor does; its default partitioner (FNV-1a) placing them
// elsewhere; and a Consumer's ConsumePartition from the oldest offset and
// from an offset.
func TestSarama(t *testing.T) {
	s, srv := serve(t, nil)
	addrs := []string{srv.Addr().String()}
	const parts, count = 3, 200

	admin, err := sarama.NewClusterAdmin(addrs, saramaConfig())
	require.NoError(t, err)
	defer admin.Close()

	codecs := []struct {
		name  string
		codec sarama.CompressionCodec
		want  log.Compression
	}{
		{"none", sarama.CompressionNone, log.None},
		{"gzip", sarama.CompressionGZIP, log.Gzip},
		{"snappy", sarama.CompressionSnappy, log.Snappy},
		{"lz4", sarama.CompressionLZ4, log.LZ4},
		{"zstd", sarama.CompressionZSTD, log.Zstd},
	}
	retention := "3600000"
	for _, c := range codecs {
		topic := "sarama-" + c.name
		require.NoError(t, admin.CreateTopic(topic, &sarama.TopicDetail{
			NumPartitions: parts, ReplicationFactor: 1,
			ConfigEntries: map[string]*string{"retention.ms": &retention},
		}, false))
		d, err := s.DescribeTopic(topic)
		require.NoError(t, err)
		require.Len(t, d.Partitions, parts)
		require.Equal(t, time.Hour, d.Config.Retention)
	}
	err = admin.CreateTopic("sarama-none", &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false)
	require.ErrorIs(t, err, sarama.ErrTopicAlreadyExists)

	topics, err := admin.ListTopics()
	require.NoError(t, err)
	for _, c := range codecs {
		d, ok := topics["sarama-"+c.name]
		require.True(t, ok, "sarama-%s listed", c.name)
		require.Equal(t, int32(parts), d.NumPartitions)
		require.Equal(t, retention, *d.ConfigEntries["retention.ms"])
	}
	results, err := admin.DescribeConfigs([]*sarama.ConfigResource{
		{Type: sarama.TopicResource, Name: "sarama-gzip"},
		{Type: sarama.TopicResource, Name: "missing"},
	}, sarama.DescribeConfigsOptions{IncludeSynonyms: true, IncludeDocumentation: true})
	require.NoError(t, err)
	require.Len(t, results, 2)
	configs := map[string]sarama.ConfigEntry{}
	for _, r := range results {
		switch r.Name {
		case "sarama-gzip":
			require.Equal(t, sarama.ErrNoError, r.ErrorCode)
			for _, e := range r.Configs {
				configs[e.Name] = e
			}
		case "missing":
			require.Equal(t, sarama.ErrUnknownTopicOrPartition, r.ErrorCode)
		default:
			t.Fatalf("described %q", r.Name)
		}
	}
	require.Equal(t, retention, configs["retention.ms"].Value)
	require.False(t, configs["retention.ms"].Default)
	require.Equal(t, "delete", configs["cleanup.policy"].Value)

	key := func(i int) string { return fmt.Sprintf("key-%d", i%13) }
	for _, c := range codecs {
		topic := "sarama-" + c.name
		conf := saramaConfig()
		conf.Producer.Compression = c.codec
		conf.Producer.Partitioner = sarama.NewMurmur2Partitioner
		p, err := sarama.NewSyncProducer(addrs, conf)
		require.NoError(t, err)
		msgs := make([]*sarama.ProducerMessage, count)
		for i := range msgs {
			msgs[i] = &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(key(i)),
				Value: sarama.StringEncoder(fmt.Sprintf("%s value %d, compressible compressible", c.name, i))}
		}
		require.NoError(t, p.SendMessages(msgs))
		require.NoError(t, p.Close())

		// Each message where Sarama says, in its key's partition.
		for _, m := range msgs {
			want, err := s.PartitionFor(topic, []byte(m.Key.(sarama.StringEncoder)))
			require.NoError(t, err)
			require.Equal(t, int32(want), m.Partition, "key %q", m.Key)
			got, err := s.Get(topic, int(m.Partition), m.Offset)
			require.NoError(t, err)
			require.Equal(t, string(m.Key.(sarama.StringEncoder)), string(got.Key))
			require.Equal(t, string(m.Value.(sarama.StringEncoder)), string(got.Value))
		}
		// Every batch in the codec, from an idempotent producer.
		used, total := 0, int64(0)
		for p := range parts {
			b, err := s.View(strata.ReadUncommitted).ReadBatches(topic, p, 0, 1<<20, nil)
			require.NoError(t, err)
			if len(b) > 0 {
				used++
			}
			for len(b) > 0 {
				h, err := log.ReadHeader(b)
				require.NoError(t, err)
				require.Equal(t, c.want, h.Compression(), "%s partition %d batch at %d", topic, p, h.BaseOffset)
				require.GreaterOrEqual(t, h.ProducerID, int64(0), "idempotent")
				total += int64(h.NumRecords)
				b = b[h.Size():]
			}
		}
		require.Greater(t, used, 1, "13 keys over %d partitions", parts)
		require.Equal(t, int64(count), total)
	}

	// Sarama's default partitioner hashes keys with FNV-1a, not Kafka's
	// murmur2: some keys land elsewhere than Store.PartitionFor says.
	p, err := sarama.NewSyncProducer(addrs, saramaConfig())
	require.NoError(t, err)
	elsewhere := 0
	for i := range 13 {
		m := &sarama.ProducerMessage{Topic: "sarama-none", Key: sarama.StringEncoder(key(i)), Value: sarama.StringEncoder("fnv")}
		_, _, err := p.SendMessage(m)
		require.NoError(t, err)
		want, err := s.PartitionFor("sarama-none", []byte(key(i)))
		require.NoError(t, err)
		if int32(want) != m.Partition {
			elsewhere++
		}
	}
	require.NoError(t, p.Close())
	require.Positive(t, elsewhere, "FNV-1a places some of 13 keys elsewhere than murmur2")

	// Back through a Consumer: each partition from the oldest offset, and
	// from offset 5.
	conf := saramaConfig()
	// A short long poll: closing a PartitionConsumer waits for its fetch.
	conf.Consumer.MaxWaitTime = 20 * time.Millisecond
	consumer, err := sarama.NewConsumer(addrs, conf)
	require.NoError(t, err)
	defer consumer.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, topic := range []string{"sarama-snappy", "sarama-zstd"} {
		for p := range parts {
			for _, from := range []int64{sarama.OffsetOldest, 5} {
				start := max(from, 0)
				want, err := s.Read(ctx, topic, p, start, 1<<20)
				require.NoError(t, err)
				require.NotEmpty(t, want)
				pc, err := consumer.ConsumePartition(topic, int32(p), from)
				require.NoError(t, err)
				for _, w := range want {
					select {
					case m := <-pc.Messages():
						require.Equal(t, w.Offset, m.Offset)
						require.Equal(t, string(w.Key), string(m.Key))
						require.Equal(t, string(w.Value), string(m.Value))
					case err := <-pc.Errors():
						require.NoError(t, err)
					case <-ctx.Done():
						t.Fatalf("%s-%d from %d: %v", topic, p, from, ctx.Err())
					}
				}
				end, err := s.ListOffsets(topic, p, strata.Latest)
				require.NoError(t, err)
				require.Equal(t, end, pc.HighWaterMarkOffset())
				require.NoError(t, pc.Close())
			}
		}
	}

	require.NoError(t, admin.DeleteTopic("sarama-gzip"))
	_, err = s.DescribeTopic("sarama-gzip")
	require.Error(t, err)
	err = admin.DeleteTopic("sarama-gzip")
	require.True(t, errors.Is(err, sarama.ErrUnknownTopicOrPartition), "%v", err)
}
