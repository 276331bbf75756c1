package broker

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
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
// requests in order, and writes each response itself before it blocks
// reading the next request, as Kafka's SocketServer mutes a connection's
// reads while its response is being sent.
type conn struct {
	srv *Server
	nc  net.Conn
	raw net.Conn      // the TCP connection under nc: nc itself without TLS
	in  io.Reader     // what requests are read from: nc, buffered by read
	br  *bufio.Reader // in once read buffers it
	buf []byte        // the last request's frame, reused when small
	// sasl is the SASL session of an authenticated connection, kept when
	// sessions end (SASL.SessionLifetime); nil otherwise.
	sasl *saslConn

	// pending holds the encoded responses not yet written, in request
	// order: those of the requests handled since the last write.
	pending []byte
	since   time.Time    // when the first pending response was handled
	fetch   frameBuffers // a Fetch response's frame being written
	iov     net.Buffers
	failed  bool             // a write failed: nothing more is written
	now     func() time.Time // the clock: time.Now but in tests
	host    string           // the client's address (clientHost), set by the accept loop
}

func newConn(srv *Server, nc net.Conn) *conn {
	c := &conn{srv: srv, nc: nc, raw: nc, now: time.Now}
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
	err := c.read()
	if ferr := c.flush(nil); err == nil {
		err = ferr
	}
	if err != nil && !(errors.Is(err, net.ErrClosed) && c.srv.isClosed()) {
		// A connection Close itself closed is not worth a line.
		c.srv.logf("broker: %s: closed: %v", c.nc.RemoteAddr(), err)
	}
	c.nc.Close()
}

// read handles requests until one fails; the error says why the
// connection closes (nil when the client closed it). The responses of
// the requests that arrived together are written together, once no
// whole request is left in the read buffer (or sooner: see respond,
// waits and coalesceWait), so that a client with requests in flight
// costs one read and one write for several; the idle deadline is set
// before each read that may wait for the client, not for each request.
func (c *conn) read() error {
	c.br = bufio.NewReaderSize(c.nc, readBufferBytes)
	c.in = c.br
	var size [4]byte
	for {
		if !c.requestBuffered() {
			if err := c.flush(nil); err != nil {
				return err
			}
			if c.srv.opts.IdleTimeout > 0 {
				_ = c.nc.SetReadDeadline(time.Now().Add(c.srv.opts.IdleTimeout))
			}
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
		if len(c.pending) > 0 && (waits(frame) || c.now().Sub(c.since) >= coalesceWait) {
			if err := c.flush(nil); err != nil {
				return err
			}
		}
		resp, corr, err := c.handle(frame)
		if resp != nil {
			if werr := c.respond(corr, resp); werr != nil {
				return werr
			}
		}
		if err != nil {
			return err
		}
	}
}

// requestBuffered reports whether a whole request is in the read
// buffer, so that reading it cannot wait for the client.
func (c *conn) requestBuffered() bool {
	if c.br.Buffered() < 4 {
		return false
	}
	p, _ := c.br.Peek(4)
	return uint64(c.br.Buffered()-4) >= uint64(binary.BigEndian.Uint32(p))
}

// coalesceWait is how long a response may wait for the requests that
// arrived with its own to be handled, so that it goes out with theirs.
const coalesceWait = 500 * time.Microsecond

// waits reports whether the handler of the request frame (after its
// size) may wait for something else than its own work: for records to
// arrive (Fetch) or for other clients (a group's rebalance, say). The
// responses before such a request are written before it is handled.
// Only the APIs a client sends many of in a row without waiting are
// taken not to wait.
func waits(frame []byte) bool {
	if len(frame) < 2 {
		return true
	}
	switch kmsg.Key(binary.BigEndian.Uint16(frame)) {
	case kmsg.Produce, kmsg.ListOffsets, kmsg.Metadata, kmsg.OffsetCommit,
		kmsg.OffsetFetch, kmsg.FindCoordinator, kmsg.Heartbeat, kmsg.ApiVersions:
		return false
	}
	return true
}

// readFrame reads a request frame of n bytes (after its size). One
// larger than reusedFrameBytes is read into a buffer that grows with what
// arrives, from reusedFrameBytes, four times as large each time it is
// full, so that a size prefix makes the broker allocate at most
// reusedFrameBytes or 16/3 times what the client has sent, whichever is
// more, not what it claims it will send; a whole frame costs at most four
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

// coalesceBytes is how many bytes of responses a connection gathers
// before it writes them.
const coalesceBytes = 64 << 10

// respond encodes resp, the response to the request of correlation id
// corr, after the pending ones, releasing it, and writes them once they
// hold coalesceBytes. A Fetch response is written at once, after the
// pending ones, in one writev, its large record sets straight from the
// segment mappings it pins, which it releases once written or dropped.
// The error is the write's: the connection closes, and later responses
// are dropped.
func (c *conn) respond(corr int32, resp kmsg.Response) error {
	if fr, ok := resp.(*fetchResponse); ok && appendFetchFrame(&c.fetch, corr, fr.FetchResponse) {
		return c.flush(fr)
	}
	if c.failed {
		releaseResponse(resp)
		return errWriteFailed
	}
	if len(c.pending) == 0 {
		c.since = c.now()
	}
	c.pending = appendResponse(c.pending, corr, resp)
	releaseResponse(resp)
	if len(c.pending) >= coalesceBytes {
		return c.flush(nil)
	}
	return nil
}

// errWriteFailed is the error of a write after one that failed.
var errWriteFailed = errors.New("broker: an earlier write failed")

// flush writes the pending responses, then fr's frame (which
// appendFetchFrame built in c.fetch) when fr is not nil, releasing fr,
// in one write within IdleTimeout.
func (c *conn) flush(fr *fetchResponse) error {
	if len(c.pending) == 0 && fr == nil {
		return nil
	}
	if c.failed {
		if fr != nil {
			fr.release()
		}
		return errWriteFailed
	}
	if c.srv.opts.IdleTimeout > 0 {
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.srv.opts.IdleTimeout))
	}
	c.iov = c.iov[:0]
	if len(c.pending) > 0 {
		c.iov = append(c.iov, c.pending)
	}
	if fr != nil {
		c.iov = c.fetch.buffers(c.iov)
	}
	w := c.iov // WriteTo consumes its receiver
	_, err := w.WriteTo(c.nc)
	clear(c.iov) // no references to the mappings once released
	if fr != nil {
		fr.release()
		if cap(c.fetch.head) > reusedFrameBytes {
			c.fetch.head = nil
		}
	}
	c.pending = c.pending[:0]
	if cap(c.pending) > reusedFrameBytes {
		c.pending = nil
	}
	if err != nil {
		c.failed = true
		return fmt.Errorf("broker: writing responses: %w", err)
	}
	return nil
}

// handleFrame decodes and handles one request frame (the bytes after the
// size), and returns the response to send (nil for none, as for a Produce
// with acks 0) with the request's correlation id. An error closes the
// connection: a frame that does not decode, an unknown key or a version
// out of range (but ApiVersions'), or a handler that panicked.
func (srv *Server) handleFrame(frame []byte) (kmsg.Response, int32, error) {
	return srv.handleFrameFrom(frame, "")
}

// handleFrameFrom is handleFrame for a client at host (clientHost).
func (srv *Server) handleFrameFrom(frame []byte, host string) (kmsg.Response, int32, error) {
	h, body, err := parseHeader(frame)
	if err != nil {
		return nil, 0, err
	}
	h.host = host
	return srv.dispatch(h, body)
}

// clientHost is a client's address as Kafka's coordinator records a
// member's client host (InetAddress.toString: "/127.0.0.1"), "" if it has
// no IP address.
func clientHost(addr net.Addr) string {
	if ta, ok := addr.(*net.TCPAddr); ok {
		return "/" + ta.IP.String()
	}
	return ""
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
