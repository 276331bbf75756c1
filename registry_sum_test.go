package strata

import (
	"bytes"
	"encoding/json"
	"hash/crc32"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/vfs"
)

// TestRegistryChecksumIsOfTheCompactForm: checksum sums what json.Compact
// leaves of a value, white space inside strings (escaped quotes and
// backslashes too) kept, between tokens dropped, at any length.
func TestRegistryChecksumIsOfTheCompactForm(t *testing.T) {
	for _, raw := range []string{
		`{}`,
		`{ "t" : { "id" : "x y", "config" : { "a" : 1 } } }`,
		"{\n  \"a\\\" b\": \"c \\\\\",\n\t\"d\": [1, 2,\r\n 3]\n}",
		`{"s": "` + strings.Repeat(`\" \\ `, 300) + `", "n": ` + strings.Repeat(" ", 700) + `1}`,
	} {
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, []byte(raw)))
		require.Equal(t, crc32.Checksum(compact.Bytes(), castagnoli), checksum([]byte(raw)), "%.40q", raw)
	}
}

// FuzzRegistryChecksum: checksum agrees with a byte-at-a-time compaction
// on any input, valid JSON or not, and with json.Compact on valid JSON.
func FuzzRegistryChecksum(f *testing.F) {
	f.Add([]byte(`{ "a\\" b": "c \\\\", "d": [1, 2,` + "\r\n 3]\n}"))
	f.Add([]byte(`"\\\\\" x`))
	f.Add(bytes.Repeat([]byte(`{"k": "v \" w",  `), 80))
	f.Fuzz(func(t *testing.T, raw []byte) {
		require.Equal(t, checksumByByte(raw), checksum(raw))
		var compact bytes.Buffer
		if json.Compact(&compact, raw) == nil {
			require.Equal(t, crc32.Checksum(compact.Bytes(), castagnoli), checksum(raw))
		}
	})
}

// checksumByByte is checksum looking at one byte at a time.
func checksumByByte(raw []byte) uint32 {
	var out []byte
	inString, escaped := false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		out = append(out, c)
	}
	return crc32.Checksum(out, castagnoli)
}

// BenchmarkParseRegistry parses the topics.json of a store of one topic,
// as an Open reads it.
func BenchmarkParseRegistry(b *testing.B) {
	id := topic.NewID()
	cfg, err := TopicConfig{}.WithDefaults()
	require.NoError(b, err)
	dir := b.TempDir()
	require.NoError(b, writeRegistry(vfs.OS, dir, map[string]registryEntry{"log": {ID: id, Config: cfg}}))
	data, err := vfs.ReadFile(vfs.OS, filepath.Join(dir, topicsFile))
	require.NoError(b, err)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := parseRegistryFast(data); !ok {
			b.Fatal("not read by parseRegistryFast")
		}
	}
}
