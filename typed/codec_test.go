package typed_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata/typed"
)

// codecOrder is the value type of the codec and typed tests.
type codecOrder struct {
	ID    int      `json:"id"`
	Item  string   `json:"item"`
	Tags  []string `json:"tags,omitempty"`
	Price float64  `json:"price"`
}

// roundTrip encodes v with c, checks the bytes, decodes them and checks the
// value that comes back.
func roundTrip[T any](t *testing.T, c typed.Codec[T], v T, wantBytes []byte, wantBack T) {
	t.Helper()
	b, err := c.Encode(v)
	require.NoError(t, err)
	require.Equal(t, wantBytes, b)
	if wantBytes != nil {
		require.NotNil(t, b)
	}
	back, err := c.Decode(b)
	require.NoError(t, err)
	require.Equal(t, wantBack, back)
}

func TestCodecRoundTrip(t *testing.T) {
	o := codecOrder{ID: 7, Item: "tea", Tags: []string{"green"}, Price: 3.5}
	oJSON := []byte(`{"id":7,"item":"tea","tags":["green"],"price":3.5}`)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"json struct", func(t *testing.T) { roundTrip(t, typed.JSON[codecOrder](), o, oJSON, o) }},
		{"json pointer", func(t *testing.T) { roundTrip(t, typed.JSON[*codecOrder](), &o, oJSON, &o) }},
		{"json nil pointer is null", func(t *testing.T) { roundTrip(t, typed.JSON[*codecOrder](), nil, nil, nil) }},
		{"json nil map is null", func(t *testing.T) { roundTrip[map[string]int](t, typed.JSON[map[string]int](), nil, nil, nil) }},
		{"json empty map", func(t *testing.T) {
			roundTrip(t, typed.JSON[map[string]int](), map[string]int{}, []byte("{}"), map[string]int{})
		}},
		{"json nil interface is null", func(t *testing.T) { roundTrip(t, typed.JSON[any](), nil, nil, nil) }},
		{"json zero struct", func(t *testing.T) {
			roundTrip(t, typed.JSON[codecOrder](), codecOrder{}, []byte(`{"id":0,"item":"","price":0}`), codecOrder{})
		}},
		{"json string", func(t *testing.T) { roundTrip(t, typed.JSON[string](), "a\"b", []byte(`"a\"b"`), "a\"b") }},
		{"string", func(t *testing.T) { roundTrip(t, typed.String(), "héllo", []byte("héllo"), "héllo") }},
		{"empty string is a key", func(t *testing.T) { roundTrip(t, typed.String(), "", []byte{}, "") }},
		{"bytes", func(t *testing.T) { roundTrip(t, typed.Bytes(), []byte{0, 1, 2}, []byte{0, 1, 2}, []byte{0, 1, 2}) }},
		{"bytes nil is null", func(t *testing.T) { roundTrip(t, typed.Bytes(), nil, nil, nil) }},
		{"bytes empty stays empty", func(t *testing.T) { roundTrip(t, typed.Bytes(), []byte{}, []byte{}, []byte{}) }},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestCodecDecodeNull(t *testing.T) {
	o, err := typed.JSON[codecOrder]().Decode(nil)
	require.NoError(t, err)
	require.Equal(t, codecOrder{}, o, "null decodes to the zero value")
	s, err := typed.String().Decode(nil)
	require.NoError(t, err)
	require.Empty(t, s)
}

func TestCodecBytesDoesNotCopy(t *testing.T) {
	b := []byte("raw")
	enc, err := typed.Bytes().Encode(b)
	require.NoError(t, err)
	require.Same(t, &b[0], &enc[0])
}

func TestCodecJSONErrors(t *testing.T) {
	_, err := typed.JSON[codecOrder]().Decode([]byte("{not json"))
	var syntax *json.SyntaxError
	require.ErrorAs(t, err, &syntax)

	_, err = typed.JSON[any]().Encode(func() {})
	var unsupported *json.UnsupportedTypeError
	require.ErrorAs(t, err, &unsupported)
}
