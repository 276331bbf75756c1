package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"strconv"
	"time"

	"github.com/stratalog/strata"
)

// The defaults of Options.
const (
	// DefaultAddr is the address Start listens on: loopback only.
	DefaultAddr = "127.0.0.1:9092"
	// DefaultMaxRequestBytes is Kafka's socket.request.max.bytes.
	DefaultMaxRequestBytes = 100 << 20
	// DefaultIdleTimeout is Kafka's connections.max.idle.ms.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultMaxConns is the default cap on open connections.
	DefaultMaxConns = 1024
	// DefaultHandshakeTimeout is the default of Options.HandshakeTimeout.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultGroupHeartbeatInterval is Kafka's
	// group.consumer.heartbeat.interval.ms.
	DefaultGroupHeartbeatInterval = 5 * time.Second
)

// ErrInvalidOptions means an Options field is out of range; the message
// says which and the valid range.
var ErrInvalidOptions = errors.New("broker: invalid options")

// Options configure a Server. The zero value (or nil) means every default;
// a zero field means its default.
type Options struct {
	// Addr is the TCP address Start listens on, host:port. Default
	// DefaultAddr (127.0.0.1:9092): listen on every interface only by
	// saying so (":9092").
	Addr string
	// AdvertisedAddr is the host:port Metadata gives clients for the broker
	// (Kafka's advertised.listeners): what they connect to after the
	// bootstrap. Default: the address the listener is bound to.
	AdvertisedAddr string
	// MaxRequestBytes bounds a request frame (Kafka's
	// socket.request.max.bytes), and so what one request may make the
	// broker allocate to read it: a larger size prefix closes the
	// connection before anything is read or allocated. A request over
	// 1 MiB is read into a buffer that grows with the bytes that arrive,
	// so that a size prefix alone allocates little. Default
	// DefaultMaxRequestBytes (100 MiB); at least 1 KiB.
	MaxRequestBytes int
	// IdleTimeout closes a connection that sends no request for that long,
	// or whose request does not arrive whole within it (Kafka's
	// connections.max.idle.ms). Default DefaultIdleTimeout (10 minutes).
	IdleTimeout time.Duration
	// MaxConns caps the connections open at once; one more is closed as
	// soon as it is accepted. Default DefaultMaxConns (1024).
	MaxConns int
	// AutoCreateTopics makes Metadata create the topics it is asked for
	// that do not exist, when the client allows it (Kafka's
	// auto.create.topics.enable), with AutoCreateConfig. Default false:
	// an unknown topic is UNKNOWN_TOPIC_OR_PARTITION.
	AutoCreateTopics bool
	// AutoCreateConfig is the config of the topics AutoCreateTopics
	// creates; its zero value is the store's defaults (one partition,
	// Kafka's num.partitions).
	AutoCreateConfig strata.TopicConfig
	// TLS, when not nil, makes every connection speak TLS (Kafka's SSL
	// listener, or SASL_SSL with SASL): the broker runs the server side of
	// the handshake with this config, which must hold a certificate
	// (Certificates, GetCertificate or GetConfigForClient). Client
	// certificates are asked for and checked as the config says
	// (ClientAuth, ClientCAs): a ClientAuth that verifies them needs
	// ClientCAs (or GetConfigForClient), not the system's roots crypto/tls
	// would take for a nil one. New keeps a clone of it. Default nil: plain
	// TCP. The connections of a tls.Listener given to Serve are TLS
	// already, with that listener's config, which this does not replace;
	// their handshake runs under HandshakeTimeout all the same.
	TLS *tls.Config
	// HandshakeTimeout bounds the time from a connection's accept to the
	// end of its TLS handshake and SASL authentication, whichever of them
	// are on: a client that has not finished by then is closed, so that a
	// stalled one cannot hold a connection slot. Default
	// DefaultHandshakeTimeout (10 s); unused with neither TLS nor SASL.
	HandshakeTimeout time.Duration
	// SASL, when not nil, makes every connection authenticate with SASL
	// before anything else (Kafka's SASL_PLAINTEXT listener, or SASL_SSL
	// with TLS): see SASL. Default nil: no authentication.
	SASL *SASL
	// GroupHeartbeatInterval is how often the members of KIP-848
	// consumer groups heartbeat (Kafka's
	// group.consumer.heartbeat.interval.ms, which the broker sends them):
	// a partition that moves between two wire members reaches its new
	// owner within about two of them. Default
	// DefaultGroupHeartbeatInterval (5 s); at least 1 ms.
	GroupHeartbeatInterval time.Duration
	// ErrorLog receives the reasons connections are closed (a malformed or
	// oversized request, a handler's panic, a failed authentication); nil
	// discards them.
	ErrorLog *stdlog.Logger
}

// withDefaults returns a copy of o (nil meaning none) with the defaults
// filled in, or ErrInvalidOptions.
func (o *Options) withDefaults() (Options, error) {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.GroupHeartbeatInterval == 0 {
		c.GroupHeartbeatInterval = DefaultGroupHeartbeatInterval
	}
	switch {
	case c.MaxRequestBytes < 1<<10:
		return c, fmt.Errorf("broker: MaxRequestBytes %d out of range [1024, %d]: %w", c.MaxRequestBytes, int64(1<<31-1), ErrInvalidOptions)
	case c.MaxRequestBytes > 1<<31-1:
		return c, fmt.Errorf("broker: MaxRequestBytes %d out of range [1024, %d]: %w", c.MaxRequestBytes, int64(1<<31-1), ErrInvalidOptions)
	case c.IdleTimeout < 0:
		return c, fmt.Errorf("broker: IdleTimeout %v is negative: %w", c.IdleTimeout, ErrInvalidOptions)
	case c.MaxConns < 0:
		return c, fmt.Errorf("broker: MaxConns %d is negative: %w", c.MaxConns, ErrInvalidOptions)
	case c.HandshakeTimeout < 0:
		return c, fmt.Errorf("broker: HandshakeTimeout %v is negative: %w", c.HandshakeTimeout, ErrInvalidOptions)
	case c.GroupHeartbeatInterval < time.Millisecond || c.GroupHeartbeatInterval > (1<<31-1)*time.Millisecond:
		return c, fmt.Errorf("broker: GroupHeartbeatInterval %v out of range [1ms, %v]: %w", c.GroupHeartbeatInterval, (1<<31-1)*time.Millisecond, ErrInvalidOptions)
	}
	if c.TLS != nil {
		if len(c.TLS.Certificates) == 0 && c.TLS.GetCertificate == nil && c.TLS.GetConfigForClient == nil {
			return c, fmt.Errorf("broker: TLS has no certificate (Certificates, GetCertificate or GetConfigForClient): %w", ErrInvalidOptions)
		}
		verifies := c.TLS.ClientAuth == tls.VerifyClientCertIfGiven || c.TLS.ClientAuth == tls.RequireAndVerifyClientCert
		if verifies && c.TLS.ClientCAs == nil && c.TLS.GetConfigForClient == nil {
			return c, fmt.Errorf("broker: TLS.ClientAuth %v verifies client certificates, but TLS.ClientCAs is nil: crypto/tls would take any certificate the system's roots sign; set ClientCAs to the CAs of the clients: %w", c.TLS.ClientAuth, ErrInvalidOptions)
		}
		c.TLS = c.TLS.Clone()
	}
	if c.SASL != nil {
		sasl, err := c.SASL.withDefaults()
		if err != nil {
			return c, err
		}
		c.SASL = &sasl
	}
	if c.AdvertisedAddr != "" {
		if _, _, err := splitHostPort(c.AdvertisedAddr); err != nil {
			return c, err
		}
	}
	return c, nil
}

// splitHostPort splits an advertised host:port.
func splitHostPort(addr string) (string, int32, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("broker: advertised address %q: %v: %w", addr, err, ErrInvalidOptions)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || host == "" {
		return "", 0, fmt.Errorf("broker: advertised address %q is not host:port with a port in [0, 65535]: %w", addr, ErrInvalidOptions)
	}
	return host, int32(p), nil
}
