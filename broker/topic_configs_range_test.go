package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestTopicConfigMillis sets the millisecond configs to the ends of
// Kafka's ranges, by CreateTopics and IncrementalAlterConfigs: a value
// past what a time.Duration holds (Kafka's Long.MAX_VALUE, the default of
// max.compaction.lag.ms, say) is as good as forever, never a short time
// the multiplication wrapped to; retention.ms and delete.retention.ms 0
// keep nothing (Kafka's 0), not the default; below Kafka's least value
// (-1 for retention.ms, 0 for delete.retention.ms, 1 for segment.ms) is
// INVALID_CONFIG. min.cleanable.dirty.ratio 0 is always due, as in Kafka,
// not the default.
func TestTopicConfigMillis(t *testing.T) {
	s, srv := serve(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm, _ := adminClient(t, srv)
	const centuries = 200 * 365 * 24 * time.Hour

	// 18446744073710 ms times 10^6 wraps to 448384 ns.
	created, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.ms": ptr("18446744073710"),
		"cleanup.policy": ptr("compact,delete"), "max.compaction.lag.ms": ptr("9223372036854775807")}, "t")
	require.NoError(t, err)
	require.NoError(t, created.Err, created.ErrMessage)
	d, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.Greater(t, d.Config.Retention, centuries)
	require.Greater(t, d.Config.MaxCompactionLag, centuries)

	alter := func(name, value string) error {
		r, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: name, Value: &value}}, "t")
		require.NoError(t, err)
		return r[0].Err
	}
	for _, v := range []string{"9223372036854775807", "18446744073709553", "9223372036854776"} {
		require.NoError(t, alter("retention.ms", v), v)
		require.NoError(t, alter("min.compaction.lag.ms", v), v)
		d, err := s.DescribeTopic("t")
		require.NoError(t, err)
		require.Greater(t, d.Config.Retention, centuries, v)
		require.Greater(t, d.Config.MinCompactionLag, centuries, v)
	}
	require.NoError(t, alter("min.compaction.lag.ms", "0"))
	for _, name := range []string{"retention.ms", "delete.retention.ms"} {
		require.NoError(t, alter(name, "0"), name)
		cs := configsOf(t, ctx, adm, "t")
		require.Equal(t, "0", val(cs[name]), name)
	}
	require.NoError(t, alter("min.cleanable.dirty.ratio", "0"))
	require.Equal(t, "0", val(configsOf(t, ctx, adm, "t")["min.cleanable.dirty.ratio"]), "always due, not the default 0.5")
	require.ErrorIs(t, alter("min.cleanable.dirty.ratio", "-0.5"), kerr.InvalidConfig)
	d, err = s.DescribeTopic("t")
	require.NoError(t, err)
	require.LessOrEqual(t, d.Config.MinCleanableDirtyRatio, 0.0)
	require.Positive(t, d.Config.Retention)
	require.LessOrEqual(t, d.Config.Retention, time.Millisecond)
	require.Positive(t, d.Config.DeleteRetention)
	require.LessOrEqual(t, d.Config.DeleteRetention, time.Millisecond)

	for _, v := range []string{"-2", "-9223372036854775808"} {
		require.ErrorIs(t, alter("retention.ms", v), kerr.InvalidConfig, v)
	}
	require.ErrorIs(t, alter("delete.retention.ms", "-1"), kerr.InvalidConfig, "delete.retention.ms is at least 0")
	_, err = adm.CreateTopic(ctx, 1, 1, map[string]*string{"segment.ms": ptr("0")}, "u")
	require.ErrorIs(t, err, kerr.InvalidConfig, "segment.ms is at least 1")
	d2, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.Equal(t, d.Config, d2.Config, "refused values change nothing")
}

// TestTopicConfigRetentionBytesZero: retention.bytes 0 keeps nothing but
// the active segment, as in Kafka (not the default, no bound), and reads
// back as 0.
func TestTopicConfigRetentionBytesZero(t *testing.T) {
	s, srv := serve(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm, _ := adminClient(t, srv)
	_, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.bytes": ptr("0"), "segment.bytes": ptr("16384")}, "t")
	require.NoError(t, err)
	require.Equal(t, "0", val(configsOf(t, ctx, adm, "t")["retention.bytes"]))
	for i := range 8 {
		_, err := s.AppendTo(ctx, "t", 0, strata.Record{Key: []byte{byte(i)}, Value: make([]byte, 10<<10)})
		require.NoError(t, err)
	}
	_, err = s.EnforceRetention(ctx)
	require.NoError(t, err)
	start, err := s.ListOffsets("t", 0, strata.Earliest)
	require.NoError(t, err)
	require.Equal(t, int64(7), start, "only the active segment, of the last record, is kept")
}
