package typed

import (
	"encoding/json"
	"reflect"
)

// Codec turns a Go value into the bytes of a record key or value and back:
// Kafka's serializer and deserializer in one. A nil slice stands for
// Kafka's null, both ways: Encode returning nil makes a record without a key,
// or a tombstone value, and Decode is given nil for those.
//
// A Codec must be safe for concurrent use. The ones here are.
type Codec[T any] interface {
	Encode(T) ([]byte, error)
	Decode([]byte) (T, error)
}

// JSON returns a Codec that encodes values of T with encoding/json. A nil
// T (a nil pointer, map, slice or interface) encodes to nil, Kafka's null,
// and nil decodes to T's zero value: use a pointer type, JSON[*Order](), to
// tell a tombstone from a zero value.
func JSON[T any]() Codec[T] { return jsonCodec[T]{} }

type jsonCodec[T any] struct{}

func (jsonCodec[T]) Encode(v T) ([]byte, error) {
	if isNil(v) {
		return nil, nil
	}
	return json.Marshal(v)
}

func (jsonCodec[T]) Decode(b []byte) (T, error) {
	var v T
	if b == nil {
		return v, nil
	}
	err := json.Unmarshal(b, &v)
	return v, err
}

// isNil reports whether v is nil: a nil interface, pointer, map, slice,
// channel or function.
func isNil[T any](v T) bool {
	rv := reflect.ValueOf(any(v))
	switch rv.Kind() {
	case reflect.Invalid:
		return true
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Chan, reflect.Func:
		return rv.IsNil()
	}
	return false
}

// String returns a Codec for UTF-8 text (not checked), as Kafka's
// StringSerializer. Every string, "" included, encodes to a non-nil slice,
// so a string key is always a key; nil decodes to "".
func String() Codec[string] { return stringCodec{} }

type stringCodec struct{}

func (stringCodec) Encode(s string) ([]byte, error) { return append([]byte{}, s...), nil }
func (stringCodec) Decode(b []byte) (string, error) { return string(b), nil }

// Bytes returns the identity Codec, for raw bytes: nil stays nil (no key, or
// a tombstone), and an empty slice stays empty. It does not copy: a
// Producer copies what it buffers, and the records a Reader returns own
// their bytes.
func Bytes() Codec[[]byte] { return bytesCodec{} }

type bytesCodec struct{}

func (bytesCodec) Encode(b []byte) ([]byte, error) { return b, nil }
func (bytesCodec) Decode(b []byte) ([]byte, error) { return b, nil }
