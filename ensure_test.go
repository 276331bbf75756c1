package strata_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// TestEnsureTopicCreatesOnce: EnsureTopic creates a missing topic with its
// config and leaves an existing one of the same config alone, data
// included, in the same store and after a reopen; zero fields compare as
// their defaults.
func TestEnsureTopicCreatesOnce(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	cfg := strata.TopicConfig{Partitions: 3, CleanupPolicy: strata.CleanupCompact, Retention: time.Hour}
	require.NoError(t, s.EnsureTopic("orders", cfg))
	d, err := s.DescribeTopic("orders")
	require.NoError(t, err)
	require.Equal(t, 3, d.Config.Partitions)
	require.Equal(t, strata.CleanupCompact, d.Config.CleanupPolicy)
	require.Equal(t, time.Hour, d.Config.Retention)
	_, err = s.AppendTo(ctx, "orders", 2, rec("k", "kept"))
	require.NoError(t, err)
	require.NoError(t, s.EnsureTopic("orders", cfg))
	require.NoError(t, s.EnsureTopic("orders", d.Config), "the config with its defaults filled in")

	require.NoError(t, s.EnsureTopic("plain", strata.TopicConfig{}))
	require.NoError(t, s.EnsureTopic("plain", strata.TopicConfig{Partitions: 1, CleanupPolicy: strata.CleanupDelete}), "the defaults, spelled out")
	require.NoError(t, s.Close())

	s, err = strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.EnsureTopic("orders", cfg))
	r, err := s.Get("orders", 2, 0)
	require.NoError(t, err)
	require.Equal(t, "kept", string(r.Value))
	require.Equal(t, []string{"orders", "plain"}, s.Topics())
}

// TestEnsureTopicMismatch: an existing topic whose partition count or
// cleanup policy differs is ErrTopicConfigMismatch, saying what it has and
// what was wanted, after a reopen too; the topic is unchanged.
func TestEnsureTopicMismatch(t *testing.T) {
	dir := t.TempDir()
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 3}))
	require.NoError(t, s.Close())
	s, err = strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	defer s.Close()

	tests := []struct {
		name string
		cfg  strata.TopicConfig
		says []string
	}{
		{"more partitions", strata.TopicConfig{Partitions: 6}, []string{"Partitions 3 (wanted 6)"}},
		{"the default partitions", strata.TopicConfig{}, []string{"Partitions 3 (wanted 1)"}},
		{"compacted", strata.TopicConfig{Partitions: 3, CleanupPolicy: strata.CleanupCompact}, []string{"CleanupPolicy delete (wanted compact)"}},
		{"both", strata.TopicConfig{Partitions: 2, CleanupPolicy: strata.CleanupCompactDelete, Retention: time.Minute},
			[]string{"Partitions 3 (wanted 2)", "CleanupPolicy delete (wanted compact,delete)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.EnsureTopic("t", tt.cfg)
			require.ErrorIs(t, err, strata.ErrTopicConfigMismatch)
			for _, say := range tt.says {
				require.ErrorContains(t, err, say)
			}
			require.NotContains(t, err.Error(), "Retention", "only the refused differences")
		})
	}
	d, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.Equal(t, 3, d.Config.Partitions)
	require.Equal(t, strata.CleanupDelete, d.Config.CleanupPolicy)
	require.Len(t, d.Partitions, 3)
}

// TestEnsureTopicOtherDifferencesLogged: a difference in any other field
// keeps the topic's own config and is logged at Warn level, with what the
// topic has and what was wanted.
func TestEnsureTopicOtherDifferencesLogged(t *testing.T) {
	var logged strings.Builder
	s := stratatest.Open(t, &strata.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{Partitions: 2, Retention: time.Hour}))
	require.NoError(t, s.EnsureTopic("t", strata.TopicConfig{Partitions: 2, Retention: 2 * time.Hour, Sync: strata.SyncAlways}))
	out := logged.String()
	require.Contains(t, out, "level=WARN")
	require.Contains(t, out, "topic=t")
	require.Contains(t, out, "Retention 1h0m0s (wanted 2h0m0s)")
	require.Contains(t, out, "Sync the store's sync policy (wanted SyncAlways)")
	d, err := s.DescribeTopic("t")
	require.NoError(t, err)
	require.Equal(t, time.Hour, d.Config.Retention, "the topic keeps its own")

	logged.Reset()
	require.NoError(t, s.EnsureTopic("t", strata.TopicConfig{Partitions: 2, Retention: time.Hour}))
	require.Empty(t, logged.String(), "nothing differs: nothing logged")
}

// TestEnsureTopicBadInput: bad names and configs fail as CreateTopic's do,
// whether or not the topic exists, and change nothing; after Close,
// ErrClosed.
func TestEnsureTopicBadInput(t *testing.T) {
	s, err := strata.Open(t.TempDir(), &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	tests := []struct {
		name  string
		topic string
		cfg   strata.TopicConfig
		want  error
	}{
		{"invalid name", "a/b", strata.TopicConfig{}, strata.ErrInvalidTopic},
		{"empty name", "", strata.TopicConfig{}, strata.ErrInvalidTopic},
		{"reserved name", strata.ConsumerOffsetsTopic, strata.TopicConfig{}, strata.ErrReservedTopic},
		{"invalid config, new topic", "new", strata.TopicConfig{Partitions: -1}, strata.ErrInvalidConfig},
		{"invalid config, existing topic", "t", strata.TopicConfig{Retention: -5}, strata.ErrInvalidConfig},
		{"invalid cleanup policy", "t", strata.TopicConfig{CleanupPolicy: "sometimes"}, strata.ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, s.EnsureTopic(tt.topic, tt.cfg), tt.want)
		})
	}
	require.Equal(t, []string{"t"}, s.Topics())
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.EnsureTopic("t", strata.TopicConfig{}), strata.ErrClosed)
	require.ErrorIs(t, s.EnsureTopic("other", strata.TopicConfig{}), strata.ErrClosed)
}

// TestEnsureTopicExistingAllocatesNothing: EnsureTopic of an open topic
// whose config is the one wanted (zero fields as their defaults) builds
// nothing: no error made and dropped, no field-by-field comparison.
func TestEnsureTopicExistingAllocatesNothing(t *testing.T) {
	s, err := strata.Open(t.TempDir(), &strata.Options{Sync: strata.SyncNever})
	require.NoError(t, err)
	defer s.Close()
	cfg := strata.TopicConfig{Partitions: 2, Retention: time.Hour}
	require.NoError(t, s.EnsureTopic("t", cfg))
	require.Zero(t, testing.AllocsPerRun(100, func() {
		if err := s.EnsureTopic("t", cfg); err != nil {
			t.Fatal(err)
		}
	}))
}
