package broker_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

func handshakeReq(version int16, mechanism string) *kmsg.SASLHandshakeRequest {
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.SetVersion(version)
	req.Mechanism = mechanism
	return req
}

func authenticateReq(version int16, token string) *kmsg.SASLAuthenticateRequest {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SetVersion(version)
	req.SASLAuthBytes = []byte(token)
	return req
}

func metadataReq() *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(4)
	return req
}

// sendRaw writes a bare size-prefixed token, as after SaslHandshake v0.
func (c *rawClient) sendRaw(token []byte) {
	_, err := c.nc.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(token))), token...))
	require.NoError(c.t, err)
}

// authenticatePlain runs SaslHandshake v1 and SaslAuthenticate with
// PLAIN for alice.
func (c *rawClient) authenticatePlain() {
	c.t.Helper()
	hs := c.roundTrip(handshakeReq(1, broker.MechanismPlain)).(*kmsg.SASLHandshakeResponse)
	require.Equal(c.t, int16(0), hs.ErrorCode)
	auth := c.roundTrip(authenticateReq(2, "\x00alice\x00alice-secret")).(*kmsg.SASLAuthenticateResponse)
	require.Equal(c.t, int16(0), auth.ErrorCode, "%v", auth.ErrorMessage)
	require.Equal(c.t, int64(0), auth.SessionLifetimeMillis, "no re-authentication")
}

// TestSASLUnauthenticatedRefused checks that with SASL on, ApiVersions is
// answered before authentication (and lists the SASL APIs), and a
// Metadata or a Produce closes the connection, writing nothing.
func TestSASLUnauthenticatedRefused(t *testing.T) {
	s, srv := serve(t, &broker.Options{SASL: &broker.SASL{Users: testUsers}})
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	c := dial(t, srv)
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(3)
	resp := c.roundTrip(av).(*kmsg.ApiVersionsResponse)
	require.Equal(t, int16(0), resp.ErrorCode)
	ranges := map[int16][2]int16{}
	for _, k := range resp.ApiKeys {
		ranges[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	require.Equal(t, [2]int16{0, 1}, ranges[kmsg.SASLHandshake.Int16()])
	require.Equal(t, [2]int16{0, 2}, ranges[kmsg.SASLAuthenticate.Int16()])
	c.send(metadataReq())
	c.requireClosed()

	c = dial(t, srv)
	c.send(produceReq("events", batch(t, 3)))
	c.requireClosed()
	end, err := s.ListOffsets("events", 0, strata.Latest)
	require.NoError(t, err)
	require.Zero(t, end)

	// Authenticated, the same connection gets its Metadata.
	c = dial(t, srv)
	c.authenticatePlain()
	md := c.roundTrip(metadataReq()).(*kmsg.MetadataResponse)
	require.Len(t, md.Topics, 1)
}

// TestSASLBadExchanges checks each way a client can get the exchange
// wrong: it gets Kafka's error code (with a message, for a failed
// authentication) and the connection closes.
func TestSASLBadExchanges(t *testing.T) {
	_, srv := serve(t, &broker.Options{SASL: &broker.SASL{Users: testUsers, Mechanisms: []string{broker.MechanismSCRAMSHA256, broker.MechanismPlain}}})
	tests := []struct {
		name string
		run  func(c *rawClient)
	}{
		{"mechanism not offered", func(c *rawClient) {
			hs := c.roundTrip(handshakeReq(1, "GSSAPI")).(*kmsg.SASLHandshakeResponse)
			require.Equal(t, int16(33), hs.ErrorCode, "UNSUPPORTED_SASL_MECHANISM")
			require.Equal(t, []string{broker.MechanismSCRAMSHA256, broker.MechanismPlain}, hs.SupportedMechanisms)
		}},
		{"second handshake", func(c *rawClient) {
			hs := c.roundTrip(handshakeReq(1, broker.MechanismPlain)).(*kmsg.SASLHandshakeResponse)
			require.Equal(t, int16(0), hs.ErrorCode)
			hs = c.roundTrip(handshakeReq(1, broker.MechanismPlain)).(*kmsg.SASLHandshakeResponse)
			require.Equal(t, int16(34), hs.ErrorCode, "ILLEGAL_SASL_STATE")
		}},
		{"authenticate before handshake", func(c *rawClient) {
			auth := c.roundTrip(authenticateReq(1, "\x00alice\x00alice-secret")).(*kmsg.SASLAuthenticateResponse)
			require.Equal(t, int16(34), auth.ErrorCode, "ILLEGAL_SASL_STATE")
		}},
		{"authenticate after a v0 handshake", func(c *rawClient) {
			c.roundTrip(handshakeReq(0, broker.MechanismPlain))
			c.send(authenticateReq(1, "\x00alice\x00alice-secret")) // read as a PLAIN token
		}},
		{"ApiVersions after the handshake", func(c *rawClient) {
			c.roundTrip(handshakeReq(1, broker.MechanismPlain))
			c.send(kmsg.NewPtrApiVersionsRequest())
		}},
		{"wrong password", func(c *rawClient) {
			c.roundTrip(handshakeReq(1, broker.MechanismPlain))
			auth := c.roundTrip(authenticateReq(1, "\x00alice\x00alice")).(*kmsg.SASLAuthenticateResponse)
			require.Equal(t, int16(58), auth.ErrorCode, "SASL_AUTHENTICATION_FAILED")
			require.Contains(t, *auth.ErrorMessage, "invalid user name or password")
		}},
		{"malformed PLAIN token", func(c *rawClient) {
			c.roundTrip(handshakeReq(1, broker.MechanismPlain))
			auth := c.roundTrip(authenticateReq(2, "alice alice-secret")).(*kmsg.SASLAuthenticateResponse)
			require.Equal(t, int16(58), auth.ErrorCode)
			require.Contains(t, *auth.ErrorMessage, "1 fields, not 3")
		}},
		{"SCRAM delegation token", func(c *rawClient) {
			c.roundTrip(handshakeReq(1, broker.MechanismSCRAMSHA256))
			auth := c.roundTrip(authenticateReq(2, "n,,n=alice,r=abcdefgh,tokenauth=true")).(*kmsg.SASLAuthenticateResponse)
			require.Equal(t, int16(58), auth.ErrorCode)
			require.Contains(t, *auth.ErrorMessage, "tokenauth=true")
		}},
		{"SCRAM channel binding", func(c *rawClient) {
			c.roundTrip(handshakeReq(1, broker.MechanismSCRAMSHA256))
			auth := c.roundTrip(authenticateReq(2, "p=tls-unique,,n=alice,r=abcdefgh")).(*kmsg.SASLAuthenticateResponse)
			require.Equal(t, int16(58), auth.ErrorCode)
		}},
		{"SCRAM wrong proof", func(c *rawClient) {
			c.roundTrip(handshakeReq(1, broker.MechanismSCRAMSHA256))
			auth := c.roundTrip(authenticateReq(2, "n,,n=alice,r=abcdefgh")).(*kmsg.SASLAuthenticateResponse)
			require.Equal(t, int16(0), auth.ErrorCode)
			nonce := string(auth.SASLAuthBytes[2:bytes.IndexByte(auth.SASLAuthBytes, ',')])
			proof := "p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
			auth = c.roundTrip(authenticateReq(2, "c=biws,r="+nonce+","+proof)).(*kmsg.SASLAuthenticateResponse)
			require.Equal(t, int16(58), auth.ErrorCode)
			require.Contains(t, *auth.ErrorMessage, "invalid credentials")
		}},
		{"oversized token", func(c *rawClient) {
			c.roundTrip(handshakeReq(0, broker.MechanismPlain))
			_, err := c.nc.Write(binary.BigEndian.AppendUint32(nil, 1<<20))
			require.NoError(t, err)
		}},
		{"wrong password, v0", func(c *rawClient) {
			c.roundTrip(handshakeReq(0, broker.MechanismPlain))
			c.sendRaw([]byte("\x00alice\x00wrong"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, srv)
			c.t = t
			tt.run(c)
			c.requireClosed()
		})
	}
}

// TestSASLHandshakeTimeout checks that a client that stalls in the SASL
// exchange or in the TLS handshake is closed after HandshakeTimeout.
func TestSASLHandshakeTimeout(t *testing.T) {
	pki := newTestPKI(t)
	for _, tt := range []struct {
		name string
		opts broker.Options
		send func(c *rawClient)
	}{
		{"before the handshake", broker.Options{SASL: &broker.SASL{Users: testUsers}}, func(*rawClient) {}},
		{"between the steps", broker.Options{SASL: &broker.SASL{Users: testUsers}}, func(c *rawClient) {
			c.roundTrip(handshakeReq(1, broker.MechanismSCRAMSHA256))
			auth := c.roundTrip(authenticateReq(2, "n,,n=alice,r=abcdefgh")).(*kmsg.SASLAuthenticateResponse)
			require.Equal(t, int16(0), auth.ErrorCode)
		}},
		{"mid-frame", broker.Options{SASL: &broker.SASL{Users: testUsers}}, func(c *rawClient) {
			_, err := c.nc.Write([]byte{0, 0, 0, 100, 0})
			require.NoError(t, err)
		}},
		{"TLS handshake", broker.Options{TLS: pki.serverConfig()}, func(*rawClient) {}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.HandshakeTimeout = 100 * time.Millisecond
			_, srv := serve(t, &tt.opts)
			c := dial(t, srv)
			c.t = t
			tt.send(c)
			start := time.Now()
			c.requireClosed()
			require.Less(t, time.Since(start), 10*time.Second)
		})
	}
}

// TestSASLAfterAuthentication checks that once authenticated, and on a
// listener without SASL, SaslHandshake and SaslAuthenticate are
// ILLEGAL_SASL_STATE and the connection stays open.
func TestSASLAfterAuthentication(t *testing.T) {
	_, srv := serve(t, &broker.Options{SASL: &broker.SASL{Users: testUsers}})
	_, plainSrv := serve(t, nil)
	authenticated := dial(t, srv)
	authenticated.authenticatePlain()
	for _, c := range []*rawClient{authenticated, dial(t, plainSrv)} {
		hs := c.roundTrip(handshakeReq(1, broker.MechanismPlain)).(*kmsg.SASLHandshakeResponse)
		require.Equal(t, int16(34), hs.ErrorCode)
		auth := c.roundTrip(authenticateReq(1, "\x00alice\x00alice-secret")).(*kmsg.SASLAuthenticateResponse)
		require.Equal(t, int16(34), auth.ErrorCode)
		require.NotNil(t, auth.ErrorMessage)
		c.roundTrip(metadataReq())
	}
}

// TestSASLRawTokens authenticates after SaslHandshake v0, whose tokens
// come as bare size-prefixed frames: PLAIN, whose answer is an empty
// frame, and SCRAM-SHA-512 driven by franz-go's pkg/sasl/scram.
func TestSASLRawTokens(t *testing.T) {
	pki := newTestPKI(t)
	_, srv := serve(t, &broker.Options{SASL: &broker.SASL{Users: testUsers}, TLS: pki.serverConfig()})
	dialTLS := func() *rawClient {
		nc, err := tls.Dial("tcp", srv.Addr().String(), pki.clientConfig())
		require.NoError(t, err)
		t.Cleanup(func() { nc.Close() })
		return &rawClient{t: t, nc: nc, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))}
	}

	c := dialTLS()
	hs := c.roundTrip(handshakeReq(0, broker.MechanismPlain)).(*kmsg.SASLHandshakeResponse)
	require.Equal(t, int16(0), hs.ErrorCode)
	c.sendRaw([]byte("alice\x00alice\x00alice-secret"))
	require.Empty(t, c.readFrame())
	c.roundTrip(metadataReq())

	c = dialTLS()
	hs = c.roundTrip(handshakeReq(0, broker.MechanismSCRAMSHA512)).(*kmsg.SASLHandshakeResponse)
	require.Equal(t, int16(0), hs.ErrorCode)
	ctx := context.Background()
	session, token, err := kgoMechanism(broker.MechanismSCRAMSHA512, "b=o,b", testUsers["b=o,b"]).Authenticate(ctx, srv.Addr().String())
	require.NoError(t, err)
	for done := false; !done; {
		c.sendRaw(token)
		done, token, err = session.Challenge(c.readFrame())
		require.NoError(t, err)
	}
	require.Empty(t, token)
	c.roundTrip(metadataReq())
}

// TestSecurityOptions checks that a TLS config without a certificate, or
// one that verifies client certificates without ClientCAs, and SASL
// options out of range, are ErrInvalidOptions.
func TestSecurityOptions(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	for _, tt := range []struct {
		name string
		opts broker.Options
	}{
		{"TLS without a certificate", broker.Options{TLS: &tls.Config{}}},
		{"TLS verifying client certificates without ClientCAs", broker.Options{TLS: noClientCAs(t, tls.RequireAndVerifyClientCert)}},
		{"TLS verifying given client certificates without ClientCAs", broker.Options{TLS: noClientCAs(t, tls.VerifyClientCertIfGiven)}},
		{"negative HandshakeTimeout", broker.Options{HandshakeTimeout: -time.Second}},
		{"SASL without users", broker.Options{SASL: &broker.SASL{}}},
		{"SASL with Users and Password", broker.Options{SASL: &broker.SASL{Users: testUsers, Password: func(string) (string, bool) { return "", false }}}},
		{"unknown mechanism", broker.Options{SASL: &broker.SASL{Users: testUsers, Mechanisms: []string{"GSSAPI"}}}},
		{"mechanism twice", broker.Options{SASL: &broker.SASL{Users: testUsers, Mechanisms: []string{"PLAIN", "PLAIN"}}}},
		{"empty password", broker.Options{SASL: &broker.SASL{Users: map[string]string{"alice": ""}}}},
		{"empty user", broker.Options{SASL: &broker.SASL{Users: map[string]string{"": "secret"}}}},
		{"too few iterations", broker.Options{SASL: &broker.SASL{Users: testUsers, SCRAMIterations: 4095}}},
		{"too many iterations", broker.Options{SASL: &broker.SASL{Users: testUsers, SCRAMIterations: 16385}}},
		{"negative SessionLifetime", broker.Options{SASL: &broker.SASL{Users: testUsers, SessionLifetime: -time.Second}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := broker.New(s, &tt.opts)
			require.ErrorIs(t, err, broker.ErrInvalidOptions)
		})
	}
}

// noClientCAs is a server config with a certificate that verifies client
// certificates by auth without saying against which CAs.
func noClientCAs(t *testing.T, auth tls.ClientAuthType) *tls.Config {
	c := newTestPKI(t).serverConfig()
	c.ClientAuth, c.ClientCAs = auth, nil
	return c
}

// TestCloseDuringHandshake checks that Close ends connections stalled in
// the TLS handshake, in the SASL exchange and after it at once, not after
// HandshakeTimeout.
func TestCloseDuringHandshake(t *testing.T) {
	pki := newTestPKI(t)
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer s.Close()
	srv, err := broker.Start(s, &broker.Options{Addr: "127.0.0.1:0", TLS: pki.serverConfig(),
		SASL: &broker.SASL{Users: testUsers}, HandshakeTimeout: time.Hour})
	require.NoError(t, err)
	stalled, err := net.Dial("tcp", srv.Addr().String()) // sends no ClientHello
	require.NoError(t, err)
	defer stalled.Close()
	var clients []*rawClient
	for range 2 {
		nc, err := tls.Dial("tcp", srv.Addr().String(), pki.clientConfig())
		require.NoError(t, err)
		defer nc.Close()
		clients = append(clients, &rawClient{t: t, nc: nc, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))})
	}
	clients[0].roundTrip(handshakeReq(1, broker.MechanismPlain)) // and stalls
	clients[1].authenticatePlain()
	clients[1].roundTrip(metadataReq())
	start := time.Now()
	require.NoError(t, srv.Close())
	require.Less(t, time.Since(start), 5*time.Second)
	for _, c := range clients {
		_, err := c.nc.Read(make([]byte, 1))
		require.Error(t, err)
	}
}

// TestSASLPasswordPanics: a Password callback that panics closes the
// connection of the authentication that called it, whether its tokens
// come in SaslAuthenticate requests or bare after a SaslHandshake v0, and
// the Server goes on serving.
func TestSASLPasswordPanics(t *testing.T) {
	password := func(user string) (string, bool) {
		if user == "boom" {
			panic("the credential store is down")
		}
		return testUsers[user], testUsers[user] != ""
	}
	_, srv := serve(t, &broker.Options{SASL: &broker.SASL{Password: password}})
	for _, mech := range []string{broker.MechanismPlain, broker.MechanismSCRAMSHA256} {
		first := "\x00boom\x00secret"
		if mech != broker.MechanismPlain {
			first = "n,,n=boom,r=abcdef"
		}
		c := dial(t, srv)
		require.Zero(t, c.roundTrip(handshakeReq(0, mech)).(*kmsg.SASLHandshakeResponse).ErrorCode)
		c.sendRaw([]byte(first))
		c.requireClosed()

		c = dial(t, srv)
		require.Zero(t, c.roundTrip(handshakeReq(1, mech)).(*kmsg.SASLHandshakeResponse).ErrorCode)
		c.send(authenticateReq(1, first))
		c.requireClosed()
	}
	c := dial(t, srv)
	c.authenticatePlain()
	c.roundTrip(metadataReq())
}
