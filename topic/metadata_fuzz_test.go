package topic

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseMetadata: ParseMetadata answers as a line-by-line reading of
// the file as a string does.
func FuzzParseMetadata(f *testing.F) {
	id := NewID()
	for _, s := range []string{"version: 0\ntopic_id: " + id.String(), " version : 0 \r\n topic_id:" + id.String() + "\n",
		"version: 1\ntopic_id: " + id.String(), "topic_id: x\nversion: 0", "version: 0\u00a0\ntopic_id: " + id.String(), ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, ok := ParseMetadata(data)
		rid, rok := parseMetadataString(string(data))
		require.Equal(t, rok, ok)
		require.Equal(t, rid, id)
	})
}

// parseMetadataString is ParseMetadata on a string.
func parseMetadataString(data string) (id ID, ok bool) {
	version, haveID := false, false
	for line := range strings.Lines(data) {
		key, value, found := strings.Cut(strings.TrimSpace(line), ":")
		if !found {
			continue
		}
		switch strings.TrimSpace(key) {
		case "version":
			version = strings.TrimSpace(value) == "0"
		case "topic_id":
			var err error
			id, err = ParseID(strings.TrimSpace(value))
			haveID = err == nil
		}
	}
	if !version || !haveID {
		return ID{}, false
	}
	return id, true
}
