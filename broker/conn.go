package broker

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// reusedFrameBytes is the largest request buffer a connection keeps for
// its next request; a larger one is dropped after its request.
const reusedFrameBytes = 1 << 20

// readBufferBytes is the size of a connection's read buffer, from which
// the requests that arrive together (a client's pipelined small ones) are
// read with one system call.
const readBufferBytes = 8 << 10

// conn is one client connection: serve reads, decodes and handles its
// requests in order, and a writer goroutine writes the responses in the
// same order.
type conn struct {
	srv *Server
	nc  net.Conn
	raw net.Conn      // the TCP connection under nc: nc itself without TLS
	in  io.Reader     // what requests are read from: nc, buffered by read
	out chan response // to the writer, in request order
	buf []byte        // the last request's frame, reused when small
	// sasl is the SASL session of an authenticated connection, kept when
	// sessions end (SASL.SessionLifetime); nil otherwise.
	sasl *saslConn
}

// response is a response to write, with the correlation id of its request.
type response struct {
	corr int32
	resp kmsg.Response
}

func newConn(srv *Server, nc net.Conn) *conn {
	c := &conn{srv: srv, nc: nc, raw: nc, out: make(chan response, 8)}
	if tc, ok := nc.(*tls.Conn); ok {
		// A tls.Listener's: TLS already, with the listener's config.
		c.raw = tc.NetConn()
	} else if srv.opts.TLS != nil {
		c.nc = tls.Server(nc, srv.opts.TLS)
	}
	c.in = c.nc
	return c
}

// serve runs the connection until the client goes, a request closes it
// or the Server closes: first its TLS handshake and SASL authentication,
// if the Options ask for them, then its requests.
func (c *conn) serve() {
	if err := c.handshake(); err != nil {
		c.srv.logf("broker: %s: closed: %v", c.nc.RemoteAddr(), err)
		c.nc.Close()
		return
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		c.write()
	}()
	if err := c.read(); err != nil {
		c.srv.logf("broker: %s: closed: %v", c.nc.RemoteAddr(), err)
	}
	close(c.out)
	<-wrote
	c.nc.Close()
}

// read handles requests until one fails; the error says why the
// connection closes (nil when the client closed it).
func (c *conn) read() error {
	c.in = bufio.NewReaderSize(c.nc, readBufferBytes)
	var size [4]byte
	for {
		if c.srv.opts.IdleTimeout > 0 {
			_ = c.nc.SetReadDeadline(time.Now().Add(c.srv.opts.IdleTimeout))
		}
		if _, err := io.ReadFull(c.in, size[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		n := int32(binary.BigEndian.Uint32(size[:]))
		if n < 0 || int(n) > c.srv.opts.MaxRequestBytes {
			return fmt.Errorf("broker: request of %d bytes out of range [0, %d] (MaxRequestBytes): %w", n, c.srv.opts.MaxRequestBytes, errMalformed)
		}
		frame, err := c.readFrame(int(n))
		if err != nil {
			return fmt.Errorf("broker: request of %d bytes cut short: %w", n, err)
		}
		resp, corr, err := c.handle(frame)
		if resp != nil {
			c.out <- response{corr: corr, resp: resp}
		}
		if err != nil {
			return err
		}
	}
}

// readFrame reads a request frame of n bytes (after its size). One
// larger than reusedFrameBytes is read into a buffer that grows with what
// arrives, four times as large each time it is full, so that a size
// prefix makes the broker allocate at most five times what the client has
// sent, not what it claims it will send; a whole frame costs at most four
// thirds of its size more in copies and allocation than one buffer of its
// size (a third for a size of 4^k MiB).
func (c *conn) readFrame(n int) ([]byte, error) {
	if n <= reusedFrameBytes {
		frame := c.frame(n)
		_, err := io.ReadFull(c.in, frame)
		return frame, err
	}
	frame := make([]byte, reusedFrameBytes)
	have := 0
	for {
		if _, err := io.ReadFull(c.in, frame[have:]); err != nil {
			return nil, err
		}
		have = len(frame)
		if have == n {
			return frame, nil
		}
		next := make([]byte, have+min(3*have, n-have))
		copy(next, frame)
		frame = next
	}
}

// frame returns a buffer of n bytes for a request.
func (c *conn) frame(n int) []byte {
	if n > reusedFrameBytes {
		return make([]byte, n)
	}
	if cap(c.buf) < n {
		c.buf = make([]byte, n, max(n, 4<<10))
	}
	return c.buf[:n]
}

// coalesceBytes is how many bytes of the responses that are ready at once
// the writer gathers into one write.
const coalesceBytes = 64 << 10

// write writes the responses the reader hands it until it closes out. A
// failed write closes the connection, and the rest are dropped. The
// responses ready at once go out together, in one write (up to
// coalesceBytes of them, and a Fetch response last), so that a client with
// requests in flight costs one system call for several; none waits for
// another. A Fetch response goes out in one writev, its large record sets
// straight from the segment mappings it pins, which it releases once
// written or dropped.
func (c *conn) write() {
	var buf []byte
	var frame frameBuffers
	var iov net.Buffers
	failed := false
	for r := range c.out {
		if failed {
			releaseResponse(r.resp)
			continue
		}
		if c.srv.opts.IdleTimeout > 0 {
			_ = c.nc.SetWriteDeadline(time.Now().Add(c.srv.opts.IdleTimeout))
		}
		fr := c.gather(&buf, &frame, r)
		iov = iov[:0]
		if len(buf) > 0 {
			iov = append(iov, buf)
		}
		if fr != nil {
			iov = frame.buffers(iov)
		}
		w := iov // WriteTo consumes its receiver
		_, err := w.WriteTo(c.nc)
		clear(iov) // no references to the mappings once released
		if fr != nil {
			fr.release()
			if cap(frame.head) > reusedFrameBytes {
				frame.head = nil
			}
		}
		if cap(buf) > reusedFrameBytes {
			buf = nil
		}
		if err != nil {
			failed = true
			c.nc.Close() // the reader's next read fails
		}
	}
}

// gather encodes r, and the responses after it that are ready, into
// buf[:0], releasing them, until a Fetch response, which it encodes into
// frame (with its record sets as cuts) and returns, holding its pins; or
// until none is ready or buf holds coalesceBytes.
func (c *conn) gather(buf *[]byte, frame *frameBuffers, r response) *fetchResponse {
	*buf = (*buf)[:0]
	for {
		if fr, ok := r.resp.(*fetchResponse); ok && appendFetchFrame(frame, r.corr, fr.FetchResponse) {
			return fr
		}
		*buf = appendResponse(*buf, r.corr, r.resp)
		releaseResponse(r.resp)
		if len(*buf) >= coalesceBytes {
			return nil
		}
		var more bool
		select {
		case r, more = <-c.out:
		default:
		}
		if !more {
			return nil
		}
	}
}

// handleFrame decodes and handles one request frame (the bytes after the
// size), and returns the response to send (nil for none, as for a Produce
// with acks 0) with the request's correlation id. An error closes the
// connection: a frame that does not decode, an unknown key or a version
// out of range (but ApiVersions'), or a handler that panicked.
func (srv *Server) handleFrame(frame []byte) (kmsg.Response, int32, error) {
	h, body, err := parseHeader(frame)
	if err != nil {
		return nil, 0, err
	}
	return srv.dispatch(h, body)
}

// dispatch handles a request whose header parseHeader parsed, body the
// bytes that follow it, as handleFrame does.
func (srv *Server) dispatch(h header, body []byte) (resp kmsg.Response, corr int32, err error) {
	a := apiFor(h.key)
	if a == nil {
		return nil, 0, fmt.Errorf("broker: API key %d (%s) not served: %w", h.key, kmsg.NameForKey(h.key), errMalformed)
	}
	if h.version < a.min || h.version > a.max {
		if h.key == kmsg.ApiVersions.Int16() {
			return srv.unsupportedApiVersions(), h.corr, nil
		}
		return nil, 0, fmt.Errorf("broker: %s v%d out of the served range [%d, %d]: %w", kmsg.NameForKey(h.key), h.version, a.min, a.max, errMalformed)
	}
	req := kmsg.RequestForKey(h.key)
	req.SetVersion(h.version)
	if err := decodeBody(req, body); err != nil {
		return nil, 0, err
	}
	defer func() {
		if p := recover(); p != nil {
			resp, corr, err = nil, 0, fmt.Errorf("broker: %s v%d: %w: %v\n%s", kmsg.NameForKey(h.key), h.version, errPanic, p, debug.Stack())
		}
	}()
	resp, err = a.handle(srv, h, req)
	if err != nil || resp == nil {
		return nil, 0, err
	}
	resp.SetVersion(h.version)
	return resp, h.corr, nil
}
