package broker

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// pipeClient speaks to a connection of the Server over net.Pipe, inside
// a synctest bubble, whose clock the Server's session lifetimes run on.
type pipeClient struct {
	t    *testing.T
	nc   net.Conn
	corr int32
	f    *kmsg.RequestFormatter
}

func (c *pipeClient) roundTrip(req kmsg.Request) kmsg.Response {
	c.t.Helper()
	c.corr++
	_, err := c.nc.Write(c.f.AppendRequest(nil, req, c.corr))
	require.NoError(c.t, err)
	var size [4]byte
	_, err = io.ReadFull(c.nc, size[:])
	require.NoError(c.t, err)
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err = io.ReadFull(c.nc, body)
	require.NoError(c.t, err)
	require.Equal(c.t, c.corr, int32(binary.BigEndian.Uint32(body)))
	body = body[4:]
	resp := req.ResponseKind()
	if resp.IsFlexible() && resp.Key() != kmsg.ApiVersions.Int16() {
		body = body[1:]
	}
	require.NoError(c.t, resp.ReadFrom(body))
	return resp
}

// closed checks that the Server closed the connection, without answering
// req.
func (c *pipeClient) closed(req kmsg.Request) {
	c.t.Helper()
	c.corr++
	_, _ = c.nc.Write(c.f.AppendRequest(nil, req, c.corr))
	_, err := c.nc.Read(make([]byte, 1))
	require.True(c.t, errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe), "%v", err)
}

// authenticate runs SaslHandshake v1 and SaslAuthenticate v1 with PLAIN
// and returns the session_lifetime_ms given, or the error code.
func (c *pipeClient) authenticate(mechanism, token string) (int64, int16) {
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = mechanism
	if code := c.roundTrip(hs).(*kmsg.SASLHandshakeResponse).ErrorCode; code != 0 {
		return 0, code
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.SetVersion(1)
	auth.SASLAuthBytes = []byte(token)
	resp := c.roundTrip(auth).(*kmsg.SASLAuthenticateResponse)
	return resp.SessionLifetimeMillis, resp.ErrorCode
}

func metadataRequest() kmsg.Request {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(4)
	return req
}

// TestSASLReauthentication runs sessions of a minute on synctest's clock:
// SaslAuthenticate gives the lifetime, a request after it ends closes
// the connection, a re-authentication (with the same mechanism and user,
// not sooner than a second after the last one began) renews it, even
// after it has ended; any other request during one closes the
// connection.
func TestSASLReauthentication(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	const alice, bob = "\x00alice\x00alice-secret", "\x00bob\x00bob-secret"
	synctest.Test(t, func(t *testing.T) {
		srv, err := New(s, &Options{SASL: &SASL{Users: map[string]string{"alice": "alice-secret", "bob": "bob-secret"},
			Mechanisms: []string{MechanismPlain, MechanismSCRAMSHA256}, SessionLifetime: time.Minute}})
		require.NoError(t, err)
		defer srv.Close()
		dial := func() *pipeClient {
			client, server := net.Pipe()
			c := newConn(srv, server)
			go c.serve()
			t.Cleanup(func() { client.Close() })
			pc := &pipeClient{t: t, nc: client, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("pipe"))}
			lifetime, code := pc.authenticate(MechanismPlain, alice)
			require.Equal(t, int16(0), code)
			require.Equal(t, int64(60000), lifetime)
			return pc
		}

		c := dial()
		time.Sleep(59 * time.Second)
		c.roundTrip(metadataRequest())
		time.Sleep(2 * time.Second)
		c.closed(metadataRequest())

		c = dial()
		time.Sleep(30 * time.Second)
		lifetime, code := c.authenticate(MechanismPlain, alice)
		require.Equal(t, int16(0), code)
		require.Equal(t, int64(60000), lifetime)
		time.Sleep(500 * time.Millisecond)
		_, code = c.authenticate(MechanismPlain, alice)
		require.Equal(t, errIllegalSaslState, code, "within a second of the last re-authentication")
		c.roundTrip(metadataRequest())
		time.Sleep(44 * time.Second)
		c.roundTrip(metadataRequest())
		time.Sleep(time.Minute)
		_, code = c.authenticate(MechanismPlain, alice)
		require.Equal(t, int16(0), code, "after the session ended")
		c.roundTrip(metadataRequest())

		c = dial()
		time.Sleep(2 * time.Second)
		_, code = c.authenticate(MechanismPlain, bob)
		require.Equal(t, errSaslAuthenticationFailed, code, "another user")
		c.closed(metadataRequest())

		c = dial()
		time.Sleep(2 * time.Second)
		_, code = c.authenticate(MechanismSCRAMSHA256, "")
		require.Equal(t, errIllegalSaslState, code, "another mechanism")
		c.closed(metadataRequest())

		c = dial()
		time.Sleep(2 * time.Second)
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.SetVersion(1)
		hs.Mechanism = MechanismPlain
		require.Equal(t, int16(0), c.roundTrip(hs).(*kmsg.SASLHandshakeResponse).ErrorCode)
		c.closed(metadataRequest())
	})
}
