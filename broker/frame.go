package broker

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// errMalformed means a request frame does not decode.
var errMalformed = errors.New("broker: malformed request")

// errPanic means a handler panicked: the connection closes.
var errPanic = errors.New("panic")

// header is a request header (Kafka's RequestHeader v1, and v2 for the
// flexible versions of an API):
//
//	int16           request_api_key
//	int16           request_api_version
//	int32           correlation_id
//	nullable string client_id (int16 length, -1 for null; never compact)
//	tagged fields   (v2 only: uvarint count, then per field uvarint tag,
//	                uvarint size, size bytes)
type header struct {
	key      int16
	version  int16
	corr     int32
	clientID string
	host     string // the client's address (clientHost), for a group member's record
	// sasl is the connection's SASL state, for the SASL handlers: set
	// while it has not authenticated and, when sessions end
	// (SASL.SessionLifetime), for its re-authentications; nil otherwise.
	sasl *saslConn
}

// parseHeader decodes the fixed part of a request header from frame (the
// bytes after the size prefix) and returns it and the rest: the tagged
// fields, if any, and the body.
func parseHeader(frame []byte) (header, []byte, error) {
	if len(frame) < 10 {
		return header{}, nil, fmt.Errorf("broker: request of %d bytes, shorter than a header (10): %w", len(frame), errMalformed)
	}
	h := header{
		key:     int16(binary.BigEndian.Uint16(frame[0:])),
		version: int16(binary.BigEndian.Uint16(frame[2:])),
		corr:    int32(binary.BigEndian.Uint32(frame[4:])),
	}
	n := int16(binary.BigEndian.Uint16(frame[8:]))
	rest := frame[10:]
	switch {
	case n < -1:
		return header{}, nil, fmt.Errorf("broker: client id length %d: %w", n, errMalformed)
	case n > 0:
		if int(n) > len(rest) {
			return header{}, nil, fmt.Errorf("broker: client id of %d bytes past the request's end: %w", n, errMalformed)
		}
		h.clientID = string(rest[:n])
		rest = rest[n:]
	}
	return h, rest, nil
}

// skipTags steps over a tagged-fields section at the start of b and
// returns what follows it.
func skipTags(b []byte) ([]byte, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, fmt.Errorf("broker: tagged fields count: %w", errMalformed)
	}
	b = b[n:]
	for range count {
		if _, n = binary.Uvarint(b); n <= 0 { // the tag
			return nil, fmt.Errorf("broker: tagged field: %w", errMalformed)
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || size > uint64(len(b)-n) {
			return nil, fmt.Errorf("broker: tagged field size: %w", errMalformed)
		}
		b = b[n+int(size):]
	}
	return b, nil
}

// decodeBody decodes the body of req, whose version is set, from b: the
// bytes after the fixed header, starting with the header's tagged fields
// when the version is flexible.
func decodeBody(req kmsg.Request, b []byte) error {
	if req.IsFlexible() {
		var err error
		if b, err = skipTags(b); err != nil {
			return err
		}
	}
	if err := req.ReadFrom(b); err != nil {
		return fmt.Errorf("broker: %s v%d: %v: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err, errMalformed)
	}
	return nil
}

// appendResponse appends to dst a response frame: the size, the response
// header (correlation id, and an empty tagged-fields section for a flexible
// version, ResponseHeader v1, except for ApiVersions, whose response header
// is always v0 so that a client that does not know the broker's versions
// can read it) and the body.
func appendResponse(dst []byte, corr int32, resp kmsg.Response) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	if resp.IsFlexible() && resp.Key() != kmsg.ApiVersions.Int16() {
		dst = append(dst, 0)
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}
