package strata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/vfs"
)

// registryFiles returns topics.json files as writeRegistry writes them:
// none, one topic with the defaults, and topics with every field set.
func registryFiles(t testing.TB) [][]byte {
	defaults, err := topic.Config{}.WithDefaults()
	require.NoError(t, err)
	all := topic.Config{
		Partitions: 12, Retention: -1, RetentionBytes: 1 << 40, CleanupPolicy: topic.CleanupCompactDelete,
		SegmentBytes: 1 << 20, SegmentAge: time.Hour, MaxBatchBytes: 1 << 16, TimestampType: 1,
		Sync:               partition.SyncPolicy{Mode: partition.SyncModeEvery, Interval: 250 * time.Millisecond},
		IndexIntervalBytes: 1, MaxIndexBytes: 1 << 12, MinCleanableDirtyRatio: 0.125,
		DeleteRetention: -time.Second, MinCompactionLag: time.Minute, MaxCompactionLag: 2 * time.Hour,
		Compression: topic.CompressionZstd, CompressionLevel: -7, Preallocate: true,
	}
	ratio := defaults
	ratio.MinCleanableDirtyRatio = 1e-300
	var files [][]byte
	for _, reg := range []map[string]registryEntry{
		{},
		{"t": {ID: topic.NewID(), Config: defaults}},
		{"events": {ID: topic.NewID(), Config: all}, "a.b_c-9": {ID: topic.NewID(), Config: ratio},
			ConsumerOffsetsTopic: {ID: topic.NewID(), Config: defaults}},
	} {
		fsys := vfs.NewMem()
		require.NoError(t, fsys.MkdirAll("d", 0o755))
		require.NoError(t, writeRegistry(fsys, "d", reg))
		data, err := vfs.ReadFile(fsys, "d/"+topicsFile)
		require.NoError(t, err)
		files = append(files, data)
	}
	return files
}

// TestParseRegistryFastReadsWhatIsWritten: every file writeRegistry
// writes is read without encoding/json, to what encoding/json reads.
func TestParseRegistryFastReadsWhatIsWritten(t *testing.T) {
	for _, data := range registryFiles(t) {
		want, err := parseRegistryJSON(topicsFile, data)
		require.NoError(t, err)
		got, ok := parseRegistryFast(data)
		require.True(t, ok, "%s", data)
		require.Equal(t, want, got)
	}
}

// compact returns the registry file data without white space between its
// tokens, and its checksum to match.
func compact(t testing.TB, data string) string {
	var out bytes.Buffer
	require.NoError(t, json.Compact(&out, []byte(data)))
	return out.String()
}

// TestParseRegistryFastDefers: a file outside what writeRegistry writes,
// valid or damaged, is left to encoding/json, and parseRegistry answers as
// encoding/json does.
func TestParseRegistryFastDefers(t *testing.T) {
	written := string(registryFiles(t)[2])
	id := topic.NewID().String()
	for _, tc := range []struct {
		name, data string
		valid      bool // encoding/json reads it without error
	}{
		{"version 1", `{"version": 1, "topics": {"t": {"partitions": 2}}}`, true},
		{"later version", `{"version": 3, "topics": {}}`, false},
		{"no version", `{"topics": {}, "crc32c": 695980202}`, false},
		{"key in another case", `{"Version": 2, "topics": {}, "crc32c": 695980202}`, true},
		{"unknown key", `{"version": 2, "topics": {}, "crc32c": 695980202, "x": 1}`, true},
		{"repeated key", `{"version": 2, "version": 2, "topics": {}, "crc32c": 695980202}`, true},
		{"null topics", `{"version": 2, "topics": null, "crc32c": 0}`, false},
		{"escaped name", `{"version": 2, "topics": {"\u0074": {"id": "` + id + `"}}, "crc32c": 0}`, false},
		{"exponent", strings.Replace(written, `"partitions": 12`, `"partitions": 1.2e1`, 1), false},
		{"negative checksum", `{"version": 2, "topics": {}, "crc32c": -1}`, false},
		{"checksum mismatch", strings.Replace(written, `"partitions": 12`, `"partitions": 13`, 1), false},
		{"zero id", `{"version": 2, "topics": {"t": {"id": "AAAAAAAAAAAAAAAAAAAAAA"}}, "crc32c": 0}`, false},
		{"trailing bytes", written + "x", false},
		{"compact", compact(t, written), true},
		{"fields in another order", rewritten(t, []byte(written), "\n        \"partitions\": 12,\n        \"retention\": -1,",
			"\n        \"retention\": -1,\n        \"partitions\": 12,"), true},
		{"another indentation", rewritten(t, []byte(written), "\n        \"partitions\"", "\n       \"partitions\""), true},
		{"leading zero", rewritten(t, []byte(written), `"partitions": 12`, `"partitions": 012`), false},
		{"fraction without digits", rewritten(t, []byte(written), `"min_cleanable_dirty_ratio": 0.125`, `"min_cleanable_dirty_ratio": 1.`), false},
		{"fraction of an integer", rewritten(t, []byte(written), `"partitions": 12`, `"partitions": 12.0`), false},
		{"out of range", rewritten(t, []byte(written), `"timestamp_type": 1`, `"timestamp_type": 128`), false},
		{"a minus alone", rewritten(t, []byte(written), `"partitions": 12`, `"partitions": -`), false},
		{"escape in a value", rewritten(t, []byte(written), `"cleanup_policy": "compact,delete"`, `"cleanup_policy": "compact\u002cdelete"`), true},
		{"duplicate topic", rewritten(t, []byte(written), `"a.b_c-9"`, `"events"`), true},
		{"torn", written[:len(written)/2], false},
		{"empty", ``, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ok := parseRegistryFast([]byte(tc.data))
			require.False(t, ok)
			want, wantErr := parseRegistryJSON(topicsFile, []byte(tc.data))
			require.Equal(t, tc.valid, wantErr == nil, "%v", wantErr)
			got, err := parseRegistry(topicsFile, []byte(tc.data))
			require.Equal(t, want, got)
			if wantErr != nil {
				require.ErrorIs(t, err, ErrCorrupt)
				require.Equal(t, wantErr.Error(), err.Error())
			}
		})
	}
}

// layoutFile returns a version 2 topics.json laid out as appendRegistry
// lays it out around topics, a JSON value, and its checksum.
func layoutFile(topics []byte) []byte {
	return fmt.Appendf(nil, "{\n  \"version\": 2,\n  \"topics\": %s,\n  \"crc32c\": %d\n}", topics, checksum(topics))
}

// rewritten returns the registry file data with old replaced by new in
// its topics, and the checksum to match.
func rewritten(t testing.TB, data []byte, old, new string) string {
	var r registry
	require.NoError(t, json.Unmarshal(data, &r))
	topics := strings.Replace(string(r.Topics), old, new, 1)
	require.NotEqual(t, string(r.Topics), topics, "no %q", old)
	return string(layoutFile([]byte(topics)))
}

// FuzzParseRegistryFast: whatever parseRegistryFast accepts, encoding/json
// reads without error to the same topics. Each input is tried as a whole
// file and as the topics of a version 2 file laid out as appendRegistry
// lays it out, with their checksum (which a mutated file's contents would
// almost never match).
func FuzzParseRegistryFast(f *testing.F) {
	for _, data := range registryFiles(f) {
		f.Add(data)
		var r registry
		require.NoError(f, json.Unmarshal(data, &r))
		f.Add([]byte(r.Topics))
	}
	f.Add([]byte(`{"version": 2, "topics": {}, "crc32c": 695980202}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		wrapped := layoutFile(data)
		for _, file := range [][]byte{data, wrapped} {
			got, ok := parseRegistryFast(file)
			if !ok {
				continue
			}
			want, err := parseRegistryJSON(topicsFile, file)
			require.NoError(t, err, "%q", file)
			require.Equal(t, want, got, "%q", file)
		}
	})
}
