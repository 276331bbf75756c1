package broker

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The SASL mechanisms the broker serves, by their names in SaslHandshake.
const (
	// MechanismPlain is SASL/PLAIN (RFC 4616): the client sends its user
	// name and password as they are, so use it over TLS.
	MechanismPlain = "PLAIN"
	// MechanismSCRAMSHA256 is SASL/SCRAM-SHA-256 (RFC 5802, RFC 7677,
	// KIP-84): the password never crosses the connection.
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	// MechanismSCRAMSHA512 is SASL/SCRAM-SHA-512 (RFC 5802, KIP-84).
	MechanismSCRAMSHA512 = "SCRAM-SHA-512"
)

// The bounds of SASL.SCRAMIterations: RFC 7677's minimum, and the most
// Kafka's ScramMechanism allows.
const (
	MinSCRAMIterations = 4096
	MaxSCRAMIterations = 16384
)

// SASL configures SASL authentication (KIP-43, KIP-152), Kafka's
// SASL_PLAINTEXT listener, or SASL_SSL with Options.TLS. A client then
// authenticates first: before it has, the broker answers ApiVersions,
// SaslHandshake and SaslAuthenticate only, and closes the connection on
// any other request, as Kafka's SaslServerAuthenticator does. A failed
// authentication is answered with SASL_AUTHENTICATION_FAILED (58) and a
// message (or, after a SaslHandshake v0, whose tokens come without Kafka
// headers, with nothing), and the connection closes. Sessions last as
// long as the connection unless SessionLifetime says otherwise. The
// authenticated user is not otherwise used: there are no ACLs, every
// user may do everything.
//
// Set Users or Password, not both.
type SASL struct {
	// Mechanisms are the mechanisms offered, in the order SaslHandshake
	// lists them (Kafka's sasl.enabled.mechanisms): any of MechanismPlain,
	// MechanismSCRAMSHA256 and MechanismSCRAMSHA512. Default all three,
	// SCRAM first.
	Mechanisms []string
	// Users maps each user name to its password (Kafka's
	// user_NAME="PASSWORD" of PlainLoginModule, and the SCRAM credentials
	// kafka-configs.sh adds). New derives each user's SCRAM credentials
	// once, for each SCRAM mechanism offered (SCRAMIterations rounds of
	// PBKDF2 each, with a fresh random salt), and keeps a copy of the
	// map: changing it later changes nothing. User names and passwords
	// are not empty.
	Users map[string]string
	// Password, when not nil, is asked for a user's password at each
	// authentication, instead of Users: for credentials that change while
	// the Server runs. It returns false for a user it does not know. With
	// SCRAM the credentials are derived at each authentication (PBKDF2,
	// with a salt of the user's that stays the same while the Server
	// runs). It is called from the connections' goroutines, concurrently.
	Password func(user string) (password string, ok bool)
	// SCRAMIterations is the PBKDF2 iteration count of the SCRAM
	// credentials. Default and minimum MinSCRAMIterations (4096);
	// at most MaxSCRAMIterations (16384).
	SCRAMIterations int
	// SessionLifetime, when positive, ends each authenticated session
	// that long after it began (Kafka's connections.max.reauth.ms,
	// KIP-368): SaslAuthenticate v1 and later tell the client
	// (session_lifetime_ms), which authenticates again on the same
	// connection before then, with the same mechanism and user
	// (franz-go does; librdkafka from 2.2.0). A connection whose session
	// has ended is closed at its next request other than a SaslHandshake
	// that starts the re-authentication, whatever the client's versions,
	// as Kafka closes it. As Kafka, a re-authentication is taken at most
	// once a second; a SaslHandshake sooner after the last is
	// ILLEGAL_SASL_STATE, and the connection stays open. Default
	// 0: sessions do not end, and session_lifetime_ms is 0.
	SessionLifetime time.Duration
}

// withDefaults returns a copy of a with the defaults filled in, and the
// maps and slices copied, or ErrInvalidOptions.
func (a *SASL) withDefaults() (SASL, error) {
	c := *a
	if len(c.Mechanisms) == 0 {
		c.Mechanisms = []string{MechanismSCRAMSHA512, MechanismSCRAMSHA256, MechanismPlain}
	}
	c.Mechanisms = slices.Clone(c.Mechanisms)
	if c.SCRAMIterations == 0 {
		c.SCRAMIterations = MinSCRAMIterations
	}
	valid := []string{MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512}
	for i, m := range c.Mechanisms {
		if !slices.Contains(valid, m) {
			return c, fmt.Errorf("broker: SASL mechanism %q is not one of %s: %w", m, strings.Join(valid, ", "), ErrInvalidOptions)
		}
		if slices.Contains(c.Mechanisms[:i], m) {
			return c, fmt.Errorf("broker: SASL mechanism %s listed twice: %w", m, ErrInvalidOptions)
		}
	}
	switch {
	case c.SCRAMIterations < MinSCRAMIterations || c.SCRAMIterations > MaxSCRAMIterations:
		return c, fmt.Errorf("broker: SCRAMIterations %d out of range [%d, %d]: %w", c.SCRAMIterations, MinSCRAMIterations, MaxSCRAMIterations, ErrInvalidOptions)
	case c.Password != nil && c.Users != nil:
		return c, fmt.Errorf("broker: SASL has both Users and Password; set one: %w", ErrInvalidOptions)
	case c.Password == nil && len(c.Users) == 0:
		return c, fmt.Errorf("broker: SASL has no Users and no Password: %w", ErrInvalidOptions)
	case c.SessionLifetime < 0:
		return c, fmt.Errorf("broker: SASL SessionLifetime %v is negative: %w", c.SessionLifetime, ErrInvalidOptions)
	}
	for user, pass := range c.Users {
		if user == "" || pass == "" {
			return c, fmt.Errorf("broker: SASL user %q has an empty name or password: %w", user, ErrInvalidOptions)
		}
	}
	c.Users = maps.Clone(c.Users)
	return c, nil
}

// saslServer is what a Server with SASL knows to authenticate clients:
// the mechanisms offered and the users' credentials.
type saslServer struct {
	mechanisms []string
	users      map[string]string // nil with password
	password   func(string) (string, bool)
	iterations int
	lifetime   time.Duration // 0: sessions do not end
	// scram holds the SCRAM credentials derived from users, by mechanism
	// and user.
	scram map[string]map[string]scramCredential
	// secret keys the salts made up for users that do not exist, so that
	// a SCRAM exchange does not tell them from users that do.
	secret []byte
}

// newSASLServer derives the SCRAM credentials of o's users.
func newSASLServer(o *SASL) (*saslServer, error) {
	ss := &saslServer{mechanisms: o.Mechanisms, users: o.Users, password: o.Password,
		iterations: o.SCRAMIterations, lifetime: o.SessionLifetime, scram: map[string]map[string]scramCredential{}, secret: make([]byte, 32)}
	_, _ = rand.Read(ss.secret)
	for _, m := range ss.mechanisms {
		hf := scramHash(m)
		if hf == nil || ss.users == nil {
			continue
		}
		creds := make(map[string]scramCredential, len(ss.users))
		for user, pass := range ss.users {
			c, err := newSCRAMCredential(hf, pass, nil, ss.iterations)
			if err != nil {
				return nil, fmt.Errorf("broker: SCRAM credentials of %q: %v: %w", user, err, ErrInvalidOptions)
			}
			creds[user] = c
		}
		ss.scram[m] = creds
	}
	return ss, nil
}

// lookup returns user's password.
func (ss *saslServer) lookup(user string) (string, bool) {
	if ss.password != nil {
		return ss.password(user)
	}
	pass, ok := ss.users[user]
	return pass, ok
}

// errSASLFailed means a client failed to authenticate: the connection
// closes. The errors that match it are *authError.
var errSASLFailed = errors.New("broker: SASL authentication failed")

// authError is a failed authentication and its reason, what the client is
// told: it says nothing of whether the user exists.
type authError struct{ reason string }

func failed(format string, args ...any) error {
	return &authError{reason: fmt.Sprintf(format, args...)}
}

func (e *authError) Error() string { return errSASLFailed.Error() + ": " + e.reason }
func (e *authError) Unwrap() error { return errSASLFailed }

// errUnauthenticated means a client sent a request that needs
// authentication before it had authenticated: the connection closes.
var errUnauthenticated = errors.New("broker: request before SASL authentication")

// saslSession is one authentication exchange of a mechanism.
type saslSession interface {
	// step takes the client's next message and returns the answer to
	// send, and whether the client is now authenticated. An error, an
	// *authError, ends the exchange.
	step(in []byte) (out []byte, done bool, err error)
	// user is the authenticated user, once step said done.
	user() string
}

// saslConn is the SASL state of a connection: of one that has not
// authenticated yet, and, when sessions end (SASL.SessionLifetime), of
// one that has, for re-authentication. It travels to the SASL handlers in
// header.sasl.
type saslConn struct {
	srv       *saslServer
	session   saslSession // nil before SaslHandshake
	mechanism string
	raw       bool // the handshake was v0: tokens come without Kafka headers
	done      bool // authenticated, and not re-authenticating
	user      string
	reauth    time.Time // when the last re-authentication began
	expiry    time.Time // of the session, when it ends
	// closing is why the connection closes once the response the
	// handler returned is written (a failed authentication, a handshake
	// refused); nil to go on.
	closing error
}

// minReauthInterval is the least time between the starts of two
// re-authentications (Kafka's KafkaChannel MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS).
const minReauthInterval = time.Second

// handshake starts an exchange of mechanism, raw or within
// SaslAuthenticate requests.
func (sc *saslConn) handshake(mechanism string, raw bool) bool {
	if !slices.Contains(sc.srv.mechanisms, mechanism) {
		return false
	}
	if mechanism == MechanismPlain {
		sc.session = &plainSession{srv: sc.srv}
	} else {
		sc.session = newSCRAMSession(sc.srv, mechanism, nil)
	}
	sc.mechanism, sc.raw = mechanism, raw
	return true
}

// reauthenticate starts a re-authentication of an authenticated session
// with a SaslHandshake of version and mechanism; it returns the error
// code to answer, and sets closing when the connection is to close.
func (sc *saslConn) reauthenticate(version int16, mechanism string) int16 {
	switch {
	case sc.srv.lifetime == 0 || !sc.reauth.IsZero() && time.Since(sc.reauth) < minReauthInterval:
		return errIllegalSaslState
	case version == 0 || mechanism != sc.mechanism:
		sc.closing = fmt.Errorf("broker: re-authentication by SaslHandshake v%d with %q, not v1 with %s: %w", version, mechanism, sc.mechanism, errSASLFailed)
		return errIllegalSaslState
	}
	sc.handshake(mechanism, false)
	sc.done, sc.reauth = false, time.Now()
	return errNone
}

// step runs one step of the exchange the handshake started. A
// re-authentication must be of the same user.
func (sc *saslConn) step(in []byte) ([]byte, error) {
	out, done, err := sc.session.step(in)
	if err == nil && done && sc.user != "" && sc.session.user() != sc.user {
		err = failed("re-authentication as %q, not the session's user", sc.session.user())
	}
	if err != nil {
		sc.closing = err
		return nil, err
	}
	if done {
		sc.done, sc.user = true, sc.session.user()
		if sc.srv.lifetime > 0 {
			sc.expiry = time.Now().Add(sc.srv.lifetime)
		}
	}
	return out, nil
}

// lifetimeMillis is the session_lifetime_ms of a SaslAuthenticate
// response that ends an exchange.
func (sc *saslConn) lifetimeMillis() int64 {
	if !sc.done {
		return 0
	}
	return sc.srv.lifetime.Milliseconds()
}
