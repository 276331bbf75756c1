package topic_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stratalog/strata/topic"
	"github.com/stretchr/testify/require"
)

func TestSetKafkaConfig(t *testing.T) {
	for _, c := range []struct {
		name, value string
		check       func(t *testing.T, c topic.Config)
	}{
		{"retention.ms", "86400000", func(t *testing.T, c topic.Config) { require.Equal(t, 24*time.Hour, c.Retention) }},
		{"retention.ms", "-1", func(t *testing.T, c topic.Config) { require.Equal(t, time.Duration(-1), c.Retention) }},
		{"retention.ms", "0", func(t *testing.T, c topic.Config) { require.Equal(t, time.Duration(1), c.Retention) }},
		{"retention.bytes", "0", func(t *testing.T, c topic.Config) { require.Equal(t, int64(1), c.RetentionBytes) }},
		{"cleanup.policy", "compact,delete", func(t *testing.T, c topic.Config) { require.Equal(t, topic.CleanupCompactDelete, c.CleanupPolicy) }},
		{"min.cleanable.dirty.ratio", "0", func(t *testing.T, c topic.Config) { require.Negative(t, c.MinCleanableDirtyRatio) }},
		{"compression.type", "zstd", func(t *testing.T, c topic.Config) { require.Equal(t, topic.CompressionZstd, c.Compression) }},
		{"segment.bytes", "1048576", func(t *testing.T, c topic.Config) { require.Equal(t, int64(1<<20), c.SegmentBytes) }},
		{"preallocate", "true", func(t *testing.T, c topic.Config) { require.True(t, c.Preallocate) }},
	} {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			var cfg topic.Config
			require.NoError(t, topic.SetKafkaConfig(&cfg, c.name, c.value))
			c.check(t, cfg)
			full, err := cfg.WithDefaults()
			require.NoError(t, err)
			require.Equal(t, c.value, topic.KafkaConfigs(full)[c.name], "written back as Kafka writes it")
		})
	}
}

func TestSetKafkaConfigRefuses(t *testing.T) {
	for _, c := range []struct {
		name, value, says string
	}{
		{"retention.ms", "a day", "at least -1"},
		{"retention.ms", "-2", "at least -1"},
		{"segment.ms", "0", "at least 1"},
		{"retention.bytes", "-5", "at least -1"},
		{"cleanup.policy", "keep", "delete, compact or compact,delete"},
		{"compression.type", "brotli", "producer, none, gzip, snappy, lz4 or zstd"},
		{"min.cleanable.dirty.ratio", "1.5", "[0, 1]"},
		{"max.message.bytes", "5000000000", "32-bit"},
		{"preallocate", "maybe", "true or false"},
		{"compression.gzip.level", "99", "[1, 9]"},
		{"compression.gzip.level", "x", "not an integer"},
		{"retention.hours", "1", "not one Strata has"},
	} {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			cfg := topic.Config{Retention: time.Hour}
			err := topic.SetKafkaConfig(&cfg, c.name, c.value)
			require.ErrorIs(t, err, topic.ErrInvalidConfig)
			require.ErrorContains(t, err, c.name)
			require.ErrorContains(t, err, c.says)
			require.Equal(t, topic.Config{Retention: time.Hour}, cfg, "nothing changed")
		})
	}
}

func TestSetKafkaConfigsLevelAfterCodec(t *testing.T) {
	var cfg topic.Config
	require.NoError(t, topic.SetKafkaConfigs(&cfg, []string{"compression.zstd.level", "compression.type"}, []string{"7", "zstd"}))
	require.Equal(t, topic.CompressionZstd, cfg.Compression)
	require.Equal(t, 7, cfg.CompressionLevel)

	err := topic.SetKafkaConfigs(&cfg, []string{"retention.ms", "cleanup.policy"}, []string{"5", "keep"})
	require.ErrorIs(t, err, topic.ErrInvalidConfig)
	require.Zero(t, cfg.Retention, "nothing changed")
}

func TestKafkaConfigNames(t *testing.T) {
	full, err := topic.Config{Compression: topic.CompressionGzip}.WithDefaults()
	require.NoError(t, err)
	names := topic.KafkaConfigNames()
	require.IsIncreasing(t, names)
	for name := range topic.KafkaConfigs(full) {
		require.Contains(t, names, name)
		require.True(t, topic.IsKafkaConfig(name))
	}
	require.False(t, topic.IsKafkaConfig("retention.hours"))
}

// TestLiveKafkaConfigs: the configs LiveKafkaConfigNames names are those
// whose change CheckChange lets an open topic take, and only those.
func TestLiveKafkaConfigs(t *testing.T) {
	from, err := topic.Config{Partitions: 1}.WithDefaults()
	require.NoError(t, err)
	values := map[string]string{
		"cleanup.policy": "compact", "retention.ms": "1000", "segment.ms": "1000", "delete.retention.ms": "1000",
		"min.compaction.lag.ms": "1000", "max.compaction.lag.ms": "1000", "retention.bytes": "4096",
		"segment.bytes": "4096", "max.message.bytes": "4000", "index.interval.bytes": "100", "segment.index.bytes": "4096",
		"message.timestamp.type": "LogAppendTime", "compression.type": "gzip", "min.cleanable.dirty.ratio": "0.1",
		"preallocate": "true",
	}
	for _, name := range topic.KafkaConfigNames() {
		if _, level := topic.IsKafkaLevelConfig(name); level {
			require.False(t, topic.IsLiveKafkaConfig(name), name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			v, ok := values[name]
			require.True(t, ok, "a value to change %s to", name)
			to := from
			require.NoError(t, topic.SetKafkaConfig(&to, name, v))
			require.NotEqual(t, from, to)
			_, err := topic.CheckChange(from, to)
			if topic.IsLiveKafkaConfig(name) {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, topic.ErrInvalidConfig)
			}
		})
	}
	require.True(t, slices.IsSorted(topic.LiveKafkaConfigNames()))
}
