package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/stratalog/strata"
)

// ErrServerClosed is what Serve returns once Close has been called.
var ErrServerClosed = errors.New("broker: server closed")

// Server serves one strata.Store to Kafka clients. Its methods are safe
// for concurrent use.
type Server struct {
	store *strata.Store
	opts  Options
	sasl  *saslServer // nil without SASL

	ctx    context.Context // ended by Close: ends long polls
	cancel context.CancelFunc
	slots  chan struct{} // one per open connection, MaxConns of them
	groups groups        // the classic groups of wire clients (groups.go)
	// alterMu serializes the wire's changes of a topic's config, each a
	// DescribeTopic and a change from it (alterTopic); CreatePartitions
	// needs it not, the store checking the count it grows from.
	alterMu sync.Mutex
	// consumers are the wire members of KIP-848 consumer groups
	// (consumer_groups.go).
	consumers consumerGroups

	mu struct {
		sync.Mutex
		ln      net.Listener
		host    string // advertised
		port    int32
		conns   map[*conn]struct{}
		closed  bool
		serving bool
	}
	wg sync.WaitGroup // Serve and the connections' goroutines

	fetchSessions fetchSessions // KIP-227
}

// New returns a Server of s with opts (nil means the defaults), to be
// given a listener with Serve. An option out of range is ErrInvalidOptions.
// The Server never closes s.
func New(s *strata.Store, opts *Options) (*Server, error) {
	if s == nil {
		return nil, fmt.Errorf("broker: no store: %w", ErrInvalidOptions)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	srv := &Server{store: s, opts: o, slots: make(chan struct{}, o.MaxConns)}
	if o.SASL != nil {
		if srv.sasl, err = newSASLServer(o.SASL); err != nil {
			return nil, err
		}
	}
	srv.ctx, srv.cancel = context.WithCancel(context.Background())
	srv.mu.conns = map[*conn]struct{}{}
	return srv, nil
}

// Start listens on opts.Addr (default 127.0.0.1:9092) and serves s there
// in the background until Close. It returns once the listener is bound,
// so Addr is the address to give clients (":0" picks a free port).
func Start(s *strata.Store, opts *Options) (*Server, error) {
	srv, err := New(s, opts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", srv.opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	if err := srv.listen(ln); err != nil {
		ln.Close()
		return nil, err
	}
	go func() {
		defer srv.wg.Done()
		_ = srv.accept(ln)
	}()
	return srv, nil
}

// Serve accepts connections on ln and serves them until Close, then
// returns ErrServerClosed; a failure to accept returns its error, and
// Close still ends the connections accepted. A Server serves one
// listener: a second Serve is ErrInvalidOptions. Serve closes ln.
func (srv *Server) Serve(ln net.Listener) error {
	if err := srv.listen(ln); err != nil {
		ln.Close()
		return err
	}
	defer srv.wg.Done()
	return srv.accept(ln)
}

// listen records ln as the Server's listener, and the advertised address,
// and counts the accept loop in wg (under the lock, so that a Close that
// has begun waiting never misses it): its caller runs the loop and calls
// wg.Done.
func (srv *Server) listen(ln net.Listener) error {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	switch {
	case srv.mu.closed:
		return ErrServerClosed
	case srv.mu.serving:
		return fmt.Errorf("broker: the server already serves %s: %w", srv.mu.ln.Addr(), ErrInvalidOptions)
	}
	adv := srv.opts.AdvertisedAddr
	if adv == "" {
		adv = advertisable(ln.Addr())
	}
	host, port, err := splitHostPort(adv)
	if err != nil {
		return err
	}
	srv.mu.ln, srv.mu.host, srv.mu.port, srv.mu.serving = ln, host, port, true
	srv.wg.Add(1)
	return nil
}

// advertisable is the address a listener is bound to, with an unspecified
// IP (every interface) replaced by loopback: set AdvertisedAddr to serve
// clients on other hosts.
func advertisable(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		ip := t.IP
		if ip == nil || ip.IsUnspecified() {
			ip = net.IPv4(127, 0, 0, 1)
		}
		return net.JoinHostPort(ip.String(), strconv.Itoa(t.Port))
	}
	return a.String()
}

// accept accepts connections on ln until it fails or Close closes it.
func (srv *Server) accept(ln net.Listener) error {
	for {
		nc, err := ln.Accept()
		if err != nil {
			srv.mu.Lock()
			closed := srv.mu.closed
			srv.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("broker: %w", err)
		}
		select {
		case srv.slots <- struct{}{}:
		default:
			srv.logf("broker: %s: closed: %d connections open, the most MaxConns allows", nc.RemoteAddr(), srv.opts.MaxConns)
			nc.Close()
			continue
		}
		c := newConn(srv, nc)
		c.host = clientHost(nc.RemoteAddr())
		srv.mu.Lock()
		if srv.mu.closed {
			srv.mu.Unlock()
			nc.Close()
			<-srv.slots
			return ErrServerClosed
		}
		srv.mu.conns[c] = struct{}{}
		srv.wg.Add(1)
		srv.mu.Unlock()
		go func() {
			defer srv.wg.Done()
			c.serve()
			srv.mu.Lock()
			delete(srv.mu.conns, c)
			srv.mu.Unlock()
			<-srv.slots
		}()
	}
}

// Addr returns the address the Server listens on (nil before Serve).
func (srv *Server) Addr() net.Addr {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.mu.ln == nil {
		return nil
	}
	return srv.mu.ln.Addr()
}

// Close stops the Server: it closes the listener and every connection,
// ends the requests waiting (long polls, JoinGroup and SyncGroup), and
// returns once every goroutine of the Server has returned. A request
// being handled finishes first (a Produce is written or not, never half).
// The wire groups are gone (their members join again on the next Server;
// the store's consumers may join their groups). Close does not close the
// Store. Closing again does nothing.
func (srv *Server) Close() error {
	srv.mu.Lock()
	if srv.mu.closed {
		srv.mu.Unlock()
		return nil
	}
	srv.mu.closed = true
	var err error
	if srv.mu.ln != nil {
		err = srv.mu.ln.Close()
	}
	for c := range srv.mu.conns {
		c.raw.Close() // under TLS, without waiting to send close_notify
	}
	srv.mu.Unlock()
	srv.cancel()
	srv.wg.Wait()
	srv.groups.close()
	srv.consumers.close(srv.store)
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// isClosed reports whether Close has been called.
func (srv *Server) isClosed() bool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.mu.closed
}

// advertised returns the host and port Metadata gives for node 0.
func (srv *Server) advertised() (string, int32) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.mu.host, srv.mu.port
}

func (srv *Server) logf(format string, args ...any) {
	if srv.opts.ErrorLog != nil {
		srv.opts.ErrorLog.Printf(format, args...)
	}
}
