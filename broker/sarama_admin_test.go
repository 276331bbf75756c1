package broker_test

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// TestSaramaAdmin drives Sarama's ClusterAdmin (Kafka 2.8: CreatePartitions
// v3, AlterConfigs v1, IncrementalAlterConfigs v0, DescribeConfigs v3 with
// synonyms) against the listener and checks each step in the store.
func TestSaramaAdmin(t *testing.T) {
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("sarama-admin", strata.TopicConfig{Partitions: 1}))
	conf := saramaConfig()
	conf.Admin.Retry.Max = 0
	admin, err := sarama.NewClusterAdmin([]string{srv.Addr().String()}, conf)
	require.NoError(t, err)
	defer admin.Close()

	require.NoError(t, admin.CreatePartitions("sarama-admin", 3, nil, true))
	d, err := s.DescribeTopic("sarama-admin")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 1, "validate only")
	require.NoError(t, admin.CreatePartitions("sarama-admin", 3, nil, false))
	d, err = s.DescribeTopic("sarama-admin")
	require.NoError(t, err)
	require.Len(t, d.Partitions, 3)
	err = admin.CreatePartitions("sarama-admin", 2, nil, false)
	require.ErrorIs(t, err, sarama.ErrInvalidPartitions)

	hour, minute := "3600000", "60000"
	require.NoError(t, admin.AlterConfig(sarama.TopicResource, "sarama-admin", map[string]*string{"retention.ms": &hour}, false))
	d, err = s.DescribeTopic("sarama-admin")
	require.NoError(t, err)
	require.Equal(t, time.Hour, d.Config.Retention)
	require.NoError(t, admin.IncrementalAlterConfig(sarama.TopicResource, "sarama-admin", map[string]sarama.IncrementalAlterConfigsEntry{
		"min.compaction.lag.ms": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &minute},
	}, false))
	d, err = s.DescribeTopic("sarama-admin")
	require.NoError(t, err)
	require.Equal(t, time.Minute, d.Config.MinCompactionLag)
	require.Equal(t, time.Hour, d.Config.Retention, "incremental: the others stay")
	err = admin.IncrementalAlterConfig(sarama.TopicResource, "sarama-admin", map[string]sarama.IncrementalAlterConfigsEntry{
		"segment.bytes": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &minute},
	}, false)
	require.ErrorIs(t, err, sarama.ErrInvalidConfig)

	results, err := admin.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: "sarama-admin"}}, sarama.DescribeConfigsOptions{IncludeSynonyms: true})
	require.NoError(t, err)
	require.Len(t, results, 1)
	require.Equal(t, sarama.ErrNoError, results[0].ErrorCode, results[0].ErrorMsg)
	byName := map[string]sarama.ConfigEntry{}
	for _, e := range results[0].Configs {
		byName[e.Name] = e
	}
	require.Equal(t, hour, byName["retention.ms"].Value)
	require.Equal(t, sarama.SourceTopic, byName["retention.ms"].Source)
	require.Equal(t, sarama.SourceDefault, byName["segment.bytes"].Source)
	require.True(t, byName["segment.bytes"].ReadOnly)
}
