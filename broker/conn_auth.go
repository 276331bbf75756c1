package broker

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxAuthFrameBytes bounds a frame before authentication: Kafka's
// sasl.server.max.receive.size default (512 KiB).
const maxAuthFrameBytes = 512 << 10

// handshake runs the connection's TLS handshake and SASL authentication,
// those the Options ask for, within HandshakeTimeout of now. An error
// closes the connection.
func (c *conn) handshake() error {
	tc, isTLS := c.nc.(*tls.Conn)
	if !isTLS && c.srv.sasl == nil {
		return nil
	}
	_ = c.nc.SetDeadline(time.Now().Add(c.srv.opts.HandshakeTimeout))
	if isTLS {
		if err := tc.Handshake(); err != nil {
			return fmt.Errorf("broker: TLS handshake: %w", err)
		}
	}
	if c.srv.sasl != nil {
		if err := c.authenticate(); err != nil {
			return err
		}
	}
	return c.nc.SetDeadline(time.Time{})
}

// authenticate runs a SASL exchange on the connection, reading each
// request and writing its response at once, until the client has
// authenticated. An error, after the response that says why when there is
// one, closes the connection.
func (c *conn) authenticate() error {
	sc := &saslConn{srv: c.srv.sasl}
	for !sc.done {
		frame, err := c.readAuthFrame()
		if err != nil {
			return err
		}
		out, err := c.srv.authFrame(sc, frame)
		if out != nil {
			if _, werr := c.nc.Write(out); werr != nil {
				return fmt.Errorf("broker: during SASL authentication: %w", werr)
			}
		}
		if err != nil {
			return err
		}
	}
	if sc.srv.lifetime > 0 {
		c.sasl = sc
	}
	return nil
}

// errSessionExpired means a request came after the connection's SASL
// session ended: the connection closes.
var errSessionExpired = errors.New("broker: SASL session expired")

// handle handles a request frame of an authenticated connection, as
// handleFrame does, and, when SASL sessions end, closes the connection
// at a request that comes after its session has (but a SaslHandshake
// that starts a re-authentication), and at any but SaslAuthenticate
// during a re-authentication. The response comes with the error when
// there is one to write before closing.
func (c *conn) handle(frame []byte) (kmsg.Response, int32, error) {
	sc := c.sasl
	if sc == nil {
		return c.srv.handleFrameFrom(frame, c.host)
	}
	h, body, err := parseHeader(frame)
	if err != nil {
		return nil, 0, err
	}
	h.host = c.host
	switch {
	case !sc.done && h.key != kmsg.SASLAuthenticate.Int16():
		return nil, 0, fmt.Errorf("broker: %s during SASL re-authentication: %w", kmsg.NameForKey(h.key), errUnauthenticated)
	case sc.done && h.key != kmsg.SASLHandshake.Int16() && time.Now().After(sc.expiry):
		return nil, 0, fmt.Errorf("broker: %s after the SASL session of %q ended at %s: %w", kmsg.NameForKey(h.key), sc.user, sc.expiry.Format(time.RFC3339Nano), errSessionExpired)
	}
	if h.key == kmsg.SASLHandshake.Int16() || h.key == kmsg.SASLAuthenticate.Int16() {
		h.sasl = sc
	}
	resp, corr, err := c.srv.dispatch(h, body)
	if err != nil {
		return nil, 0, err
	}
	return resp, corr, sc.closing
}

// authFrame handles one frame of a connection that has not authenticated,
// sc its state, and returns the frame to write back (nil for none) and an
// error that closes the connection once that frame is written. It takes
// ApiVersions any number of times, then SaslHandshake, then
// SaslAuthenticate requests or, after a SaslHandshake v0, bare tokens,
// answered with bare tokens. Any other request is an error.
func (srv *Server) authFrame(sc *saslConn, frame []byte) ([]byte, error) {
	if sc.raw {
		out, err := rawStep(sc, frame)
		if err != nil {
			return nil, err
		}
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(out))), out...), nil
	}
	h, body, err := parseHeader(frame)
	if err != nil {
		return nil, err
	}
	switch {
	case h.key == kmsg.SASLHandshake.Int16(), h.key == kmsg.SASLAuthenticate.Int16():
	case h.key == kmsg.ApiVersions.Int16() && sc.session == nil:
	default:
		return nil, fmt.Errorf("broker: %s: %w", kmsg.NameForKey(h.key), errUnauthenticated)
	}
	h.sasl = sc
	resp, corr, err := srv.dispatch(h, body)
	if err != nil || resp == nil {
		return nil, err
	}
	return appendResponse(nil, corr, resp), sc.closing
}

// rawStep is sc.step of a bare token: a panic (of the SASL.Password
// callback, say) is an error that closes the connection, as dispatch
// makes one of a handler's.
func rawStep(sc *saslConn, token []byte) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("broker: SASL %s token: %w: %v\n%s", sc.mechanism, errPanic, p, debug.Stack())
		}
	}()
	return sc.step(token)
}

// readAuthFrame reads one frame of at most maxAuthFrameBytes (and
// MaxRequestBytes).
func (c *conn) readAuthFrame() ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(c.nc, size[:]); err != nil {
		return nil, fmt.Errorf("broker: during SASL authentication: %w", err)
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	limit := min(maxAuthFrameBytes, c.srv.opts.MaxRequestBytes)
	if n < 0 || int(n) > limit {
		return nil, fmt.Errorf("broker: frame of %d bytes during SASL authentication, out of range [0, %d]: %w", n, limit, errMalformed)
	}
	frame, err := c.readFrame(int(n))
	if err != nil {
		return nil, fmt.Errorf("broker: frame of %d bytes during SASL authentication cut short: %w", n, err)
	}
	return frame, nil
}
