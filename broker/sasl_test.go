package broker_test

import (
	"context"
	"crypto/tls"
	"fmt"
	stdlog "log"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// testUsers are the users of the tests' SASL listeners; "b=o,b" has the
// two characters SCRAM escapes in a user name.
var testUsers = map[string]string{"alice": "alice-secret", "b=o,b": "bob's, = password"}

// kgoMechanism returns franz-go's client side of a mechanism.
func kgoMechanism(mechanism, user, pass string) sasl.Mechanism {
	switch mechanism {
	case broker.MechanismPlain:
		return plain.Auth{User: user, Pass: pass}.AsMechanism()
	case broker.MechanismSCRAMSHA256:
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
	case broker.MechanismSCRAMSHA512:
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
	}
	panic(mechanism)
}

// roundTripKgo produces records to topic with a client of opts and
// consumes them back.
func roundTripKgo(t *testing.T, s *strata.Store, addr, topic string, opts ...kgo.Opt) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	require.NoError(t, err)
	defer cl.Close()
	const n = 20
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, "%s %d", topic, i)})
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	end, err := s.ListOffsets(topic, 0, strata.Latest)
	require.NoError(t, err)
	require.Equal(t, int64(n), end)
	var got []string
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		require.NoError(t, fs.Err())
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for i, v := range got {
		require.Equal(t, fmt.Sprintf("%s %d", topic, i), v)
	}
}

// pingErr returns the error of a client of opts that asks the broker for
// its metadata.
func pingErr(t *testing.T, addr string, opts ...kgo.Opt) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RequestRetries(0)}, opts...)...)
	require.NoError(t, err)
	defer cl.Close()
	return cl.Ping(ctx)
}

// TestKgoSASL authenticates franz-go with each mechanism (its
// pkg/sasl/plain and pkg/sasl/scram), produces and consumes; a wrong
// password and an unknown user are SASL_AUTHENTICATION_FAILED, and write
// nothing.
func TestKgoSASL(t *testing.T) {
	for _, mechanism := range []string{broker.MechanismPlain, broker.MechanismSCRAMSHA256, broker.MechanismSCRAMSHA512} {
		t.Run(mechanism, func(t *testing.T) {
			s, srv := serve(t, &broker.Options{SASL: &broker.SASL{Users: testUsers, Mechanisms: []string{mechanism}}})
			addr := srv.Addr().String()
			i := 0
			for user, pass := range testUsers {
				i++
				topic := fmt.Sprintf("events-%d", i)
				require.NoError(t, s.CreateTopic(topic, strata.TopicConfig{}))
				roundTripKgo(t, s, addr, topic, kgo.SASL(kgoMechanism(mechanism, user, pass)))
			}
			for _, tt := range []struct{ name, user, pass string }{
				{"wrong password", "alice", "alice-secreT"},
				{"unknown user", "mallory", "alice-secret"},
			} {
				err := pingErr(t, addr, kgo.SASL(kgoMechanism(mechanism, tt.user, tt.pass)))
				require.ErrorIs(t, err, kerr.SaslAuthenticationFailed, tt.name)
			}
		})
	}
}

// TestKgoSASLWrongMechanism checks that a mechanism the broker does not
// offer is UNSUPPORTED_SASL_MECHANISM.
func TestKgoSASLWrongMechanism(t *testing.T) {
	_, srv := serve(t, &broker.Options{SASL: &broker.SASL{Users: testUsers, Mechanisms: []string{broker.MechanismSCRAMSHA512}}})
	err := pingErr(t, srv.Addr().String(), kgo.SASL(kgoMechanism(broker.MechanismPlain, "alice", "alice-secret")))
	require.ErrorIs(t, err, kerr.UnsupportedSaslMechanism)
}

// TestKgoSASLPasswordCallback authenticates against SASL.Password, which
// is asked at each authentication.
func TestKgoSASLPasswordCallback(t *testing.T) {
	asked := make(chan string, 100)
	s, srv := serve(t, &broker.Options{SASL: &broker.SASL{Password: func(user string) (string, bool) {
		asked <- user
		pass, ok := testUsers[user]
		return pass, ok
	}}})
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	roundTripKgo(t, s, srv.Addr().String(), "events", kgo.SASL(kgoMechanism(broker.MechanismSCRAMSHA256, "b=o,b", testUsers["b=o,b"])))
	require.Equal(t, "b=o,b", <-asked)
	err := pingErr(t, srv.Addr().String(), kgo.SASL(kgoMechanism(broker.MechanismPlain, "alice", "wrong")))
	require.ErrorIs(t, err, kerr.SaslAuthenticationFailed)
}

// TestKgoTLS connects franz-go over TLS to a certificate of a CA made
// here; with client certificates required, a client without one fails
// and one with one connects.
func TestKgoTLS(t *testing.T) {
	pki := newTestPKI(t)
	s, srv := serve(t, &broker.Options{TLS: pki.serverConfig()})
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	roundTripKgo(t, s, srv.Addr().String(), "events", kgo.DialTLSConfig(pki.clientConfig()))
	require.Error(t, pingErr(t, srv.Addr().String()), "plain TCP to a TLS listener")

	s, srv = serve(t, &broker.Options{TLS: pki.mutualConfig()})
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	require.Error(t, pingErr(t, srv.Addr().String(), kgo.DialTLSConfig(pki.clientConfig())), "no client certificate")
	withCert := pki.clientConfig()
	withCert.Certificates = []tls.Certificate{pki.client}
	roundTripKgo(t, s, srv.Addr().String(), "events", kgo.DialTLSConfig(withCert))
}

// TestKgoSASLSSL authenticates with SCRAM over TLS (SASL_SSL).
func TestKgoSASLSSL(t *testing.T) {
	pki := newTestPKI(t)
	s, srv := serve(t, &broker.Options{TLS: pki.serverConfig(), SASL: &broker.SASL{Users: testUsers}})
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	roundTripKgo(t, s, srv.Addr().String(), "events", kgo.DialTLSConfig(pki.clientConfig()),
		kgo.SASL(kgoMechanism(broker.MechanismSCRAMSHA512, "alice", "alice-secret")))
	err := pingErr(t, srv.Addr().String(), kgo.DialTLSConfig(pki.clientConfig()),
		kgo.SASL(kgoMechanism(broker.MechanismSCRAMSHA512, "alice", "wrong")))
	require.ErrorIs(t, err, kerr.SaslAuthenticationFailed)
}

// TestKgoSASLReauthentication runs franz-go for a few sessions of 2.5 s
// (SASL.SessionLifetime, KIP-368): it authenticates again on its
// connections before each ends, so none is closed and every record is
// produced.
func TestKgoSASLReauthentication(t *testing.T) {
	var auths atomic.Int32
	var logs lockedBuffer
	s, srv := serve(t, &broker.Options{ErrorLog: stdlog.New(&logs, "", 0), SASL: &broker.SASL{
		SessionLifetime: 2500 * time.Millisecond,
		Password: func(user string) (string, bool) {
			auths.Add(1)
			pass, ok := testUsers[user]
			return pass, ok
		}}})
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.DefaultProduceTopic("events"),
		kgo.SASL(kgoMechanism(broker.MechanismSCRAMSHA256, "alice", testUsers["alice"])))
	require.NoError(t, err)
	defer cl.Close()
	n := 0
	for deadline := time.Now().Add(6 * time.Second); time.Now().Before(deadline); n++ {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%d", n)}).FirstErr())
		time.Sleep(20 * time.Millisecond) // the producer's pace (the machine is shared), not a wait on the server
	}
	end, err := s.ListOffsets("events", 0, strata.Latest)
	require.NoError(t, err)
	require.Equal(t, int64(n), end)
	t.Logf("%d records, %d authentications", n, auths.Load())
	require.GreaterOrEqual(t, auths.Load(), int32(4), "re-authenticated, every 1.5 s on the produce connection")
	require.NotContains(t, logs.String(), "closed")
}

// TestKgoTLSListener serves a tls.Listener, with Options.TLS set too and
// without it: the listener's connections are TLS already, and are not
// wrapped in TLS a second time; with SASL, franz-go authenticates over
// them.
func TestKgoTLSListener(t *testing.T) {
	pki := newTestPKI(t)
	for _, tt := range []struct {
		name string
		opts broker.Options
	}{
		{"Options.TLS also set", broker.Options{TLS: pki.serverConfig()}},
		{"Options.TLS nil, SASL", broker.Options{SASL: &broker.SASL{Users: testUsers}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := strata.Open(t.TempDir(), nil)
			require.NoError(t, err)
			defer s.Close()
			require.NoError(t, s.CreateTopic("events", strata.TopicConfig{}))
			srv, err := broker.New(s, &tt.opts)
			require.NoError(t, err)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			served := make(chan error, 1)
			go func() { served <- srv.Serve(tls.NewListener(ln, pki.serverConfig())) }()
			opts := []kgo.Opt{kgo.DialTLSConfig(pki.clientConfig())}
			if tt.opts.SASL != nil {
				opts = append(opts, kgo.SASL(kgoMechanism(broker.MechanismSCRAMSHA256, "alice", "alice-secret")))
			}
			roundTripKgo(t, s, ln.Addr().String(), "events", opts...)
			require.NoError(t, srv.Close())
			require.ErrorIs(t, <-served, broker.ErrServerClosed)
		})
	}
}
