package broker

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
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
// request and writing its response itself (the writer goroutine has not
// started): ApiVersions any number of times, then SaslHandshake, then
// SaslAuthenticate requests or, after a SaslHandshake v0, bare tokens,
// until the client has authenticated. Any other request, a frame over
// maxAuthFrameBytes, or a failed exchange is an error, after the response
// that says why when there is one.
func (c *conn) authenticate() error {
	sc := &saslConn{srv: c.srv.sasl}
	for !sc.done {
		frame, err := c.readAuthFrame()
		if err != nil {
			return err
		}
		if sc.raw {
			out, err := sc.step(frame)
			if err != nil {
				return err
			}
			if err := c.writeAuth(append(binary.BigEndian.AppendUint32(nil, uint32(len(out))), out...)); err != nil {
				return err
			}
			continue
		}
		h, body, err := parseHeader(frame)
		if err != nil {
			return err
		}
		switch {
		case h.key == kmsg.SASLHandshake.Int16(), h.key == kmsg.SASLAuthenticate.Int16():
		case h.key == kmsg.ApiVersions.Int16() && sc.session == nil:
		default:
			return fmt.Errorf("broker: %s: %w", kmsg.NameForKey(h.key), errUnauthenticated)
		}
		h.sasl = sc
		resp, corr, err := c.srv.dispatch(h, body)
		if err != nil {
			return err
		}
		if err := c.writeAuth(appendResponse(nil, corr, resp)); err != nil {
			return err
		}
		if sc.closing != nil {
			return sc.closing
		}
	}
	return nil
}

// readAuthFrame reads one frame of at most maxAuthFrameBytes.
func (c *conn) readAuthFrame() ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(c.nc, size[:]); err != nil {
		return nil, fmt.Errorf("broker: during SASL authentication: %w", err)
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 0 || n > maxAuthFrameBytes {
		return nil, fmt.Errorf("broker: frame of %d bytes during SASL authentication, out of range [0, %d]: %w", n, maxAuthFrameBytes, errMalformed)
	}
	frame := c.frame(int(n))
	if _, err := io.ReadFull(c.nc, frame); err != nil {
		return nil, fmt.Errorf("broker: frame of %d bytes during SASL authentication cut short: %w", n, err)
	}
	return frame, nil
}

// writeAuth writes a response frame.
func (c *conn) writeAuth(b []byte) error {
	if _, err := c.nc.Write(b); err != nil {
		return fmt.Errorf("broker: during SASL authentication: %w", err)
	}
	return nil
}
