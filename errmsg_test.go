package strata_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/stratatest"
)

// layerPrefix matches a package prefix at the start of an error message or
// of one of its parts.
var layerPrefix = regexp.MustCompile(`(^|: |\n)(strata|partition|topic|group|segment|index|log|compaction|retention|vfs): `)

// requireOnePrefix checks that msg starts with "strata: " and names no
// other package after it.
func requireOnePrefix(t *testing.T, msg string) {
	t.Helper()
	require.True(t, strings.HasPrefix(msg, "strata: "), "%q does not start with strata: ", msg)
	require.Len(t, layerPrefix.FindAllString(msg, -1), 1, "%q has more than one package prefix", msg)
}

// rootSentinels are the root package's sentinels, whose text (without the
// package prefix) ends the message of an error that matches one.
var rootSentinels = []error{
	strata.ErrBatchTooLarge, strata.ErrClosed, strata.ErrCorrupt, strata.ErrDecompressedTooLarge,
	strata.ErrFenced, strata.ErrGroupActive, strata.ErrGroupClaimed, strata.ErrInvalidConfig, strata.ErrInvalidGroup,
	strata.ErrInvalidTopic, strata.ErrLocked, strata.ErrMetadataTooLarge, strata.ErrNoKey,
	strata.ErrNoOffset, strata.ErrNoRecord, strata.ErrNoRecords, strata.ErrNotCompacted,
	strata.ErrNotOwner, strata.ErrOffsetOutOfRange, strata.ErrReadOnly, strata.ErrReservedTopic,
	strata.ErrTimestampTooFarAhead, strata.ErrTopicConfigMismatch, strata.ErrTopicExists,
	strata.ErrUnknownGroup, strata.ErrUnknownPartition, strata.ErrUnknownTopic, strata.ErrUnsupportedCompression,
	strata.ErrUnsupportedFormat,
}

// requireSentinelTextsOnce checks that msg names each sentinel's text (a
// root one's or one of a package below) at most once, and none of a
// sentinel err does not match: "...: invalid config: invalid config" and
// "...out of range [1, 9]: invalid batch" for a config error both fail.
func requireSentinelTextsOnce(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	sentinels := append([]error(nil), rootSentinels...)
	for _, ls := range lowerSentinels {
		sentinels = append(sentinels, ls.err)
	}
	for _, sentinel := range sentinels {
		text := sentinel.Error()
		text = text[layerPrefixLen(text):]
		n := strings.Count(msg+":", ": "+text+":")
		if errors.Is(err, sentinel) {
			require.LessOrEqual(t, n, 1, "%q names %q more than once", msg, text)
		} else {
			require.Zero(t, n, "%q names %q, which it does not match", msg, text)
		}
	}
}

// layerPrefixLen is the length of the package prefix msg starts with.
func layerPrefixLen(msg string) int {
	if loc := layerPrefix.FindStringIndex(msg); loc != nil && loc[0] == 0 {
		return loc[1]
	}
	return 0
}

// TestErrorMessages calls every API of the root package with bad input and
// checks the error: it matches its sentinel and its message has one package
// prefix, "strata: ".
func TestErrorMessages(t *testing.T) {
	now := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	s := stratatest.OpenOnDisk(t, &strata.Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	require.NoError(t, s.CreateTopic("c", strata.TopicConfig{CleanupPolicy: strata.CleanupCompact}))
	_, err := s.AppendTo(ctx, "t", 0, strata.Record{Value: []byte("v")})
	require.NoError(t, err)
	p := s.Producer(strata.ProducerOptions{})
	t.Cleanup(func() { _ = p.Close() })
	badCodec := s.Producer(strata.ProducerOptions{Compression: "zip"})
	t.Cleanup(func() { _ = badCodec.Close() })
	badLevel := s.Producer(strata.ProducerOptions{Compression: strata.CompressionGzip, CompressionLevel: 99})
	t.Cleanup(func() { _ = badLevel.Close() })
	c, err := s.Consumer("active", []string{"t"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	ahead := now.Add(48 * time.Hour)
	big := make([]byte, 2<<20)
	first := func(seq func(func(strata.Record, error) bool)) error {
		for _, err := range seq {
			return err
		}
		return nil
	}

	for _, tc := range []struct {
		name string
		call func() error
		want error
	}{
		{"Open no directory", func() error { _, err := strata.Open("", nil); return err }, strata.ErrInvalidConfig},
		{"Open a file", func() error { _, err := strata.Open(file, nil); return err }, strata.ErrInvalidConfig},
		{"Open locked", func() error { _, err := strata.Open(s.Dir(), nil); return err }, strata.ErrLocked},
		{"Open bad sync", func() error {
			_, err := strata.Open(t.TempDir(), &strata.Options{Sync: strata.SyncEvery(-1)})
			return err
		}, strata.ErrInvalidConfig},
		{"Open bad sync mode", func() error {
			_, err := strata.Open(t.TempDir(), &strata.Options{Sync: strata.SyncPolicy{Mode: -1}})
			return err
		}, strata.ErrInvalidConfig},
		{"RebuildRegistry locked", func() error { _, err := strata.RebuildRegistry(s.Dir()); return err }, strata.ErrLocked},
		{"CreateTopic bad name", func() error { return s.CreateTopic("a/b", strata.TopicConfig{}) }, strata.ErrInvalidTopic},
		{"CreateTopic empty name", func() error { return s.CreateTopic("", strata.TopicConfig{}) }, strata.ErrInvalidTopic},
		{"CreateTopic reserved", func() error { return s.CreateTopic("__x", strata.TopicConfig{}) }, strata.ErrReservedTopic},
		{"CreateTopic exists", func() error { return s.CreateTopic("t", strata.TopicConfig{}) }, strata.ErrTopicExists},
		{"CreateTopic partitions", func() error { return s.CreateTopic("x", strata.TopicConfig{Partitions: -1}) }, strata.ErrInvalidConfig},
		{"CreateTopic segment bytes", func() error { return s.CreateTopic("x", strata.TopicConfig{SegmentBytes: 5}) }, strata.ErrInvalidConfig},
		{"CreateTopic timestamp type", func() error { return s.CreateTopic("x", strata.TopicConfig{TimestampType: 9}) }, strata.ErrInvalidConfig},
		{"CreateTopic segment age", func() error { return s.CreateTopic("x", strata.TopicConfig{SegmentAge: -1}) }, strata.ErrInvalidConfig},
		{"CreateTopic max batch bytes", func() error { return s.CreateTopic("x", strata.TopicConfig{MaxBatchBytes: -1}) }, strata.ErrInvalidConfig},
		{"CreateTopic index interval", func() error { return s.CreateTopic("x", strata.TopicConfig{IndexIntervalBytes: -1}) }, strata.ErrInvalidConfig},
		{"CreateTopic max index bytes", func() error { return s.CreateTopic("x", strata.TopicConfig{MaxIndexBytes: 3}) }, strata.ErrInvalidConfig},
		{"CreateTopic retention", func() error { return s.CreateTopic("x", strata.TopicConfig{Retention: -2}) }, strata.ErrInvalidConfig},
		{"CreateTopic retention bytes", func() error { return s.CreateTopic("x", strata.TopicConfig{RetentionBytes: -5}) }, strata.ErrInvalidConfig},
		{"CreateTopic cleanup policy", func() error { return s.CreateTopic("x", strata.TopicConfig{CleanupPolicy: "bogus"}) }, strata.ErrInvalidConfig},
		{"CreateTopic compression", func() error { return s.CreateTopic("x", strata.TopicConfig{Compression: "brotli"}) }, strata.ErrInvalidConfig},
		{"CreateTopic compression level", func() error {
			return s.CreateTopic("x", strata.TopicConfig{Compression: strata.CompressionGzip, CompressionLevel: 99})
		}, strata.ErrInvalidConfig},
		{"CreateTopic level without codec", func() error { return s.CreateTopic("x", strata.TopicConfig{CompressionLevel: 3}) }, strata.ErrInvalidConfig},
		{"CreateTopic dirty ratio", func() error { return s.CreateTopic("x", strata.TopicConfig{MinCleanableDirtyRatio: 2}) }, strata.ErrInvalidConfig},
		{"CreateTopic sync", func() error { return s.CreateTopic("x", strata.TopicConfig{Sync: strata.SyncEvery(-time.Second)}) }, strata.ErrInvalidConfig},
		{"CreateTopic sync mode", func() error { return s.CreateTopic("x", strata.TopicConfig{Sync: strata.SyncPolicy{Mode: 7}}) }, strata.ErrInvalidConfig},
		{"EnsureTopic mismatch", func() error { return s.EnsureTopic("t", strata.TopicConfig{Partitions: 2}) }, strata.ErrTopicConfigMismatch},
		{"EnsureTopic bad name", func() error { return s.EnsureTopic("a/b", strata.TopicConfig{}) }, strata.ErrInvalidTopic},
		{"EnsureTopic reserved", func() error { return s.EnsureTopic("__x", strata.TopicConfig{}) }, strata.ErrReservedTopic},
		{"Get out of range", func() error { _, err := s.Get("t", 0, 99); return err }, strata.ErrOffsetOutOfRange},
		{"Get unknown partition", func() error { _, err := s.Get("t", 4, 0); return err }, strata.ErrUnknownPartition},
		{"GetInto unknown topic", func() error { _, err := s.GetInto("nope", 0, 0, nil); return err }, strata.ErrUnknownTopic},
		{"Scan out of range", func() error { return first(s.Scan("t", 0, 99)) }, strata.ErrOffsetOutOfRange},
		{"Scan unknown topic", func() error { return first(s.Scan("nope", 0, 0)) }, strata.ErrUnknownTopic},
		{"Get bad name", func() error { _, err := s.Get("a/b", 0, 0); return err }, strata.ErrInvalidTopic},
		{"Scan bad name", func() error { return first(s.Scan("", 0, 0)) }, strata.ErrInvalidTopic},
		{"Read bad name", func() error { _, err := s.Read(ctx, "a b", 0, 0, 1); return err }, strata.ErrInvalidTopic},
		{"DescribeTopic bad name", func() error { _, err := s.DescribeTopic("a/b"); return err }, strata.ErrInvalidTopic},
		{"PartitionFor nil key", func() error { _, err := s.PartitionFor("t", nil); return err }, strata.ErrNoKey},
		{"PartitionFor unknown topic", func() error { _, err := s.PartitionFor("nope", []byte("k")); return err }, strata.ErrUnknownTopic},
		{"PartitionFor reserved", func() error { _, err := s.PartitionFor(strata.ConsumerOffsetsTopic, []byte("k")); return err }, strata.ErrReservedTopic},
		{"DeleteTopic unknown", func() error { return s.DeleteTopic("nope") }, strata.ErrUnknownTopic},
		{"DeleteTopic reserved", func() error { return s.DeleteTopic(strata.ConsumerOffsetsTopic) }, strata.ErrReservedTopic},
		{"DescribeTopic unknown", func() error { _, err := s.DescribeTopic("nope"); return err }, strata.ErrUnknownTopic},
		{"Append unknown topic", func() error { _, err := s.Append(ctx, "nope", strata.Record{}); return err }, strata.ErrUnknownTopic},
		{"Append reserved", func() error {
			_, err := s.Append(ctx, strata.ConsumerOffsetsTopic, strata.Record{})
			return err
		}, strata.ErrReservedTopic},
		{"Append no records", func() error { _, err := s.Append(ctx, "t"); return err }, strata.ErrNoRecords},
		{"Append too large", func() error { _, err := s.Append(ctx, "t", strata.Record{Value: big}); return err }, strata.ErrBatchTooLarge},
		{"Append no key", func() error { _, err := s.Append(ctx, "c", strata.Record{Value: []byte("v")}); return err }, strata.ErrNoKey},
		{"Append ahead", func() error {
			_, err := s.Append(ctx, "t", strata.Record{Value: []byte("v"), Timestamp: ahead})
			return err
		}, strata.ErrTimestampTooFarAhead},
		{"AppendTo unknown partition", func() error { _, err := s.AppendTo(ctx, "t", 3, strata.Record{}); return err }, strata.ErrUnknownPartition},
		{"AppendTo negative partition", func() error { _, err := s.AppendTo(ctx, "t", -1, strata.Record{}); return err }, strata.ErrUnknownPartition},
		{"AppendTo no records", func() error { _, err := s.AppendTo(ctx, "t", 0); return err }, strata.ErrNoRecords},
		{"AppendTo no key", func() error {
			_, err := s.AppendTo(ctx, "c", 0, strata.Record{Value: []byte("v")})
			return err
		}, strata.ErrNoKey},
		{"Read out of range", func() error { _, err := s.Read(ctx, "t", 0, 99, 1); return err }, strata.ErrOffsetOutOfRange},
		{"Read negative offset", func() error { _, err := s.Read(ctx, "t", 0, -1, 1); return err }, strata.ErrOffsetOutOfRange},
		{"Read unknown partition", func() error { _, err := s.Read(ctx, "t", 5, 0, 1); return err }, strata.ErrUnknownPartition},
		{"Read unknown topic", func() error { _, err := s.Read(ctx, "nope", 0, 0, 1); return err }, strata.ErrUnknownTopic},
		{"Fetch out of range", func() error { _, err := s.Fetch(ctx, "t", 0, 99, 1, time.Millisecond); return err }, strata.ErrOffsetOutOfRange},
		{"Fetch unknown topic", func() error { _, err := s.Fetch(ctx, "nope", 0, 0, 1, 0); return err }, strata.ErrUnknownTopic},
		{"Records out of range", func() error { return first(s.Records(ctx, "t", 0, 99)) }, strata.ErrOffsetOutOfRange},
		{"Records unknown topic", func() error { return first(s.Records(ctx, "nope", 0, 0)) }, strata.ErrUnknownTopic},
		{"ListOffsets unknown partition", func() error { _, err := s.ListOffsets("t", 7, strata.Latest); return err }, strata.ErrUnknownPartition},
		{"ListOffsets zero spec", func() error { _, err := s.ListOffsets("t", 0, strata.OffsetSpec{}); return err }, strata.ErrInvalidConfig},
		{"Read max 0", func() error { _, err := s.Read(ctx, "t", 0, 0, 0); return err }, strata.ErrInvalidConfig},
		{"Read max -1", func() error { _, err := s.Read(ctx, "t", 0, 0, -1); return err }, strata.ErrInvalidConfig},
		{"Fetch max 0", func() error { _, err := s.Fetch(ctx, "t", 0, 0, 0, time.Millisecond); return err }, strata.ErrInvalidConfig},
		{"Fetch max -1", func() error { _, err := s.Fetch(ctx, "t", 0, 0, -1, 0); return err }, strata.ErrInvalidConfig},
		{"ListOffsets unknown topic", func() error { _, err := s.ListOffsets("nope", 0, strata.Latest); return err }, strata.ErrUnknownTopic},
		{"Commit out of range", func() error { return s.Commit("g", "t", 0, 99, "") }, strata.ErrOffsetOutOfRange},
		{"Commit negative", func() error { return s.Commit("g", "t", 0, -1, "") }, strata.ErrOffsetOutOfRange},
		{"Commit bad group", func() error { return s.Commit("", "t", 0, 0, "") }, strata.ErrInvalidGroup},
		{"Commit metadata", func() error { return s.Commit("g", "t", 0, 0, strings.Repeat("x", 5000)) }, strata.ErrMetadataTooLarge},
		{"Commit active group", func() error { return s.Commit("active", "t", 0, 0, "") }, strata.ErrGroupActive},
		{"Commit unknown topic", func() error { return s.Commit("g", "nope", 0, 0, "") }, strata.ErrUnknownTopic},
		{"DeleteGroupOffsets bad group", func() error { return s.DeleteGroupOffsets("") }, strata.ErrInvalidGroup},
		{"DeleteGroupOffsets active group", func() error { return s.DeleteGroupOffsets("active") }, strata.ErrGroupActive},
		{"DeleteRecords out of range", func() error { return s.DeleteRecords("t", 0, 99) }, strata.ErrOffsetOutOfRange},
		{"DeleteRecords unknown partition", func() error { return s.DeleteRecords("t", 9, 0) }, strata.ErrUnknownPartition},
		{"ResetOffsets active group", func() error { _, err := s.ResetOffsets("active", "t", strata.ToEarliest, false); return err }, strata.ErrGroupActive},
		{"ResetOffsets bad group", func() error { _, err := s.ResetOffsets("", "t", strata.ToEarliest, false); return err }, strata.ErrInvalidGroup},
		{"ResetOffsets bad spec", func() error { _, err := s.ResetOffsets("g", "t", strata.ResetSpec{}, false); return err }, strata.ErrInvalidConfig},
		{"ResetOffsets unknown topic", func() error { _, err := s.ResetOffsets("g", "nope", strata.ToEarliest, false); return err }, strata.ErrUnknownTopic},
		{"Lag bad group", func() error { _, err := s.Lag(ctx, "", "t"); return err }, strata.ErrInvalidGroup},
		{"Lag unknown topic", func() error { _, err := s.Lag(ctx, "g", "nope"); return err }, strata.ErrUnknownTopic},
		{"Compact unknown topic", func() error { _, err := s.Compact(ctx, "nope"); return err }, strata.ErrUnknownTopic},
		{"Compact not compacted", func() error { _, err := s.Compact(ctx, "t"); return err }, strata.ErrNotCompacted},
		{"Produce unknown topic", func() error { return p.Produce(ctx, "nope", strata.Record{}, nil) }, strata.ErrUnknownTopic},
		{"Produce too large", func() error { return p.Produce(ctx, "t", strata.Record{Value: big}, nil) }, strata.ErrBatchTooLarge},
		{"Produce ahead", func() error { return p.Produce(ctx, "t", strata.Record{Timestamp: ahead}, nil) }, strata.ErrTimestampTooFarAhead},
		{"Produce no key", func() error { return p.Produce(ctx, "c", strata.Record{Value: []byte("v")}, nil) }, strata.ErrNoKey},
		{"Produce bad codec", func() error { return badCodec.Produce(ctx, "t", strata.Record{}, nil) }, strata.ErrInvalidConfig},
		{"Produce bad level", func() error { return badLevel.Produce(ctx, "t", strata.Record{}, nil) }, strata.ErrInvalidConfig},
		{"Consumer no topics", func() error { _, err := s.Consumer("g", nil, strata.ConsumerOptions{}); return err }, strata.ErrInvalidConfig},
		{"Consumer bad group", func() error { _, err := s.Consumer("", []string{"t"}, strata.ConsumerOptions{}); return err }, strata.ErrInvalidGroup},
		{"Consumer negative CloseTimeout", func() error {
			_, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{CloseTimeout: -time.Second})
			return err
		}, strata.ErrInvalidConfig},
		{"Consumer negative MaxPollRecords", func() error {
			_, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{MaxPollRecords: -1})
			return err
		}, strata.ErrInvalidConfig},
		{"Consumer negative PollWait", func() error {
			_, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{PollWait: -1})
			return err
		}, strata.ErrInvalidConfig},
		{"Consumer unknown AutoOffsetReset", func() error {
			_, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{AutoOffsetReset: 9})
			return err
		}, strata.ErrInvalidConfig},
		{"Consumer reserved topic", func() error {
			_, err := s.Consumer("g", []string{strata.ConsumerOffsetsTopic}, strata.ConsumerOptions{})
			return err
		}, strata.ErrReservedTopic},
		{"Consumer bad topic", func() error { _, err := s.Consumer("g", []string{"a/b"}, strata.ConsumerOptions{}); return err }, strata.ErrInvalidTopic},
		{"Consumer.CommitOffsets out of range", func() error {
			return c.CommitOffsets(ctx, map[strata.TopicPartition]int64{{Topic: "t", Partition: 0}: 99})
		}, strata.ErrOffsetOutOfRange},
		{"Consumer.CommitOffsets unsubscribed topic", func() error {
			return c.CommitOffsets(ctx, map[strata.TopicPartition]int64{{Topic: "nope", Partition: 0}: -1})
		}, strata.ErrNotOwner},
		{"Consumer.CommitMessages unsubscribed topic", func() error {
			return c.CommitMessages(ctx, strata.Message{Topic: "nope", Record: strata.Record{Offset: -5}})
		}, strata.ErrNotOwner},
		{"Consumer.CommitMessages out of range", func() error {
			return c.CommitMessages(ctx, strata.Message{Topic: "t", Record: strata.Record{Offset: 1000}})
		}, strata.ErrOffsetOutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, tc.want)
			requireOnePrefix(t, err.Error())
			requireSentinelTextsOnce(t, err)
		})
	}
}

// TestDropPrefixes checks the message rewriting on its own: prefixes go at
// the start and after ": ", not inside quotes or words.
func TestDropPrefixes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"strata: topic \"nope\": strata: unknown topic", "strata: topic \"nope\": unknown topic"},
		{"topic: partition 7 of t out of range [0, 1): topic: no such partition", "strata: partition 7 of t out of range [0, 1): no such partition"},
		{"strata: group \"a: partition: b\": group: x", "strata: group \"a: partition: b\": x"},
		{"strata: group \"q\\\"x: log: \": log: y", "strata: group \"q\\\"x: log: \": y"},
		{"partition: closing t-0: e\npartition: closing t-1: e", "strata: closing t-0: e\nclosing t-1: e"},
		{"strata: subscribes to no topic: topic: invalid config", "strata: subscribes to no topic: invalid config"},
		{"reading /var/log: permission denied", "strata: reading /var/log: permission denied"},
	} {
		require.Equal(t, tc.want, strata.StoreErr(errors.New(tc.in)).Error())
	}
	require.Equal(t, context.Canceled, strata.StoreErr(context.Canceled), "a context's error stays as it is")
}

// TestNegativePartitionNamed checks that a negative partition is named
// `partition -1 of topic "t"`, not "t--1".
func TestNegativePartitionNamed(t *testing.T) {
	s := stratatest.Open(t, nil)
	require.NoError(t, s.CreateTopic("t", strata.TopicConfig{}))
	c, err := s.Consumer("g", []string{"t"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	defer c.Close()
	tp := strata.TopicPartition{Topic: "t", Partition: -1}
	for _, err := range []error{c.Pause(tp), c.Resume(tp)} {
		require.ErrorIs(t, err, strata.ErrUnknownPartition)
		require.Contains(t, err.Error(), `partition -1 of topic "t"`)
		require.NotContains(t, err.Error(), "t--1")
	}
}
