package strata

import (
	"bytes"
	"encoding/json"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
