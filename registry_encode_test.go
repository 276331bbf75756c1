package strata

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/vfs"
)

// marshalRegistryJSON is marshalRegistry, failing t on an error.
func marshalRegistryJSON(t *testing.T, topics map[string]registryEntry) []byte {
	t.Helper()
	data, err := marshalRegistry(topics)
	require.NoError(t, err)
	return data
}

// everyField returns a topic.Config with every field, nested ones too, set
// to a value other than its zero, found by reflection: a field added to
// topic.Config shows up in encoding/json's bytes, and appendRegistry must
// write it too.
func everyField(t *testing.T) topic.Config {
	var c topic.Config
	var fill func(v reflect.Value, n int)
	fill = func(v reflect.Value, n int) {
		switch v.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			v.SetInt(int64(n + 1))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			v.SetUint(uint64(n + 1))
		case reflect.String:
			v.SetString("s")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Float64, reflect.Float32:
			v.SetFloat(0.375)
		case reflect.Struct:
			for i := range v.NumField() {
				fill(v.Field(i), n+i)
			}
		default:
			t.Fatalf("topic.Config has a field of kind %s: teach appendRegistry and this test to write it", v.Kind())
		}
	}
	fill(reflect.ValueOf(&c).Elem(), 0)
	return c
}

// TestAppendRegistryIsMarshalIndent: appendRegistry writes the bytes
// encoding/json writes, checksum included, for no topic, the defaults,
// every field set (by hand and by reflection) and the values it leaves to
// encoding/json; writeRegistry writes encoding/json's bytes for those.
func TestAppendRegistryIsMarshalIndent(t *testing.T) {
	defaults, err := topic.Config{}.WithDefaults()
	require.NoError(t, err)
	files := registryFiles(t) // through writeRegistry
	require.Len(t, files, 3)
	id := topic.NewID()
	small, big, tiny, zero := defaults, defaults, defaults, defaults
	small.MinCleanableDirtyRatio = 1e-6
	big.MinCleanableDirtyRatio = -1e20
	tiny.MinCleanableDirtyRatio = 1e-300 // an exponent: encoding/json's
	zero.MinCleanableDirtyRatio = 0
	for _, tt := range []struct {
		name   string
		topics map[string]registryEntry
		own    bool // appendRegistry writes it
	}{
		{"none", map[string]registryEntry{}, true},
		{"defaults", map[string]registryEntry{"t": {ID: id, Config: defaults}}, true},
		{"every field", map[string]registryEntry{"a": {ID: id, Config: everyField(t)}, "b": {ID: topic.NewID(), Config: defaults}}, true},
		{"zero config", map[string]registryEntry{"z": {ID: id}}, true},
		{"plain floats", map[string]registryEntry{"s": {ID: id, Config: small}, "b": {ID: id, Config: big}, "z": {ID: id, Config: zero}}, true},
		{"float with an exponent", map[string]registryEntry{"t": {ID: id, Config: tiny}}, false},
		{"name to escape", map[string]registryEntry{"a<b": {ID: id, Config: defaults}}, false},
		{"policy to escape", map[string]registryEntry{"t": {ID: id, Config: topic.Config{CleanupPolicy: "\"é\""}}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := marshalRegistryJSON(t, tt.topics)
			got, ok := appendRegistry(nil, tt.topics)
			require.Equal(t, tt.own, ok)
			if ok {
				require.Equal(t, string(want), string(got))
			}
			fsys := vfs.NewMem()
			require.NoError(t, fsys.MkdirAll("d", 0o755))
			require.NoError(t, writeRegistry(fsys, "d", tt.topics))
			data, err := vfs.ReadFile(fsys, "d/"+topicsFile)
			require.NoError(t, err)
			require.Equal(t, string(want), string(data))
		})
	}
	// The files registryFiles wrote hold encoding/json's bytes too.
	for _, data := range files {
		var r registry
		require.NoError(t, json.Unmarshal(data, &r))
		var topics map[string]registryEntry
		require.NoError(t, json.Unmarshal(r.Topics, &topics))
		require.Equal(t, string(marshalRegistryJSON(t, topics)), string(data))
	}
}
