package typed

import "errors"

// Errors of the package. Match them with errors.Is; the codec's own error
// is wrapped too (errors.As finds it).
var (
	// ErrEncode means a codec could not encode a key or value; the message
	// names the topic.
	ErrEncode = errors.New("typed: cannot encode record")
	// ErrDecode means a codec could not decode a stored key or value; the
	// message names the topic, partition and offset.
	ErrDecode = errors.New("typed: cannot decode record")
)

// codecError is a codec's failure: it matches kind (ErrEncode or
// ErrDecode) and wraps the codec's error, and its message says where,
// "typed: cannot decode the value of orders partition 1 offset 1: ...".
type codecError struct {
	kind error
	msg  string
	err  error
}

func (e *codecError) Error() string   { return e.msg + ": " + e.err.Error() }
func (e *codecError) Unwrap() []error { return []error{e.kind, e.err} }
