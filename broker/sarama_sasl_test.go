package broker_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// TestSaramaSASLPlain produces with IBM's Sarama authenticated with
// SASL/PLAIN, by SaslHandshake v1 and SaslAuthenticate (its default) and
// by SaslHandshake v0 and a bare token (without ApiVersions, as Sarama
// requires for v0), over TLS for v1; a wrong password fails, with
// SASL_AUTHENTICATION_FAILED at v1.
func TestSaramaSASLPlain(t *testing.T) {
	pki := newTestPKI(t)
	for _, tt := range []struct {
		name    string
		version int16
		tls     bool
	}{
		{"v1", sarama.SASLHandshakeV1, false},
		{"v0", sarama.SASLHandshakeV0, false},
		{"v1 over TLS", sarama.SASLHandshakeV1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := &broker.Options{SASL: &broker.SASL{Users: testUsers, Mechanisms: []string{broker.MechanismPlain}}}
			if tt.tls {
				opts.TLS = pki.serverConfig()
			}
			s, srv := serve(t, opts)
			require.NoError(t, s.CreateTopic("secure", strata.TopicConfig{}))
			config := func(user, pass string) *sarama.Config {
				c := saramaConfig()
				c.Net.SASL.Enable = true
				c.Net.SASL.Mechanism = sarama.SASLTypePlaintext
				c.Net.SASL.Version = tt.version
				c.Net.SASL.User, c.Net.SASL.Password = user, pass
				c.ApiVersionsRequest = tt.version != sarama.SASLHandshakeV0
				c.Metadata.Retry.Max = 0
				if tt.tls {
					c.Net.TLS.Enable = true
					c.Net.TLS.Config = pki.clientConfig()
				}
				return c
			}
			addrs := []string{srv.Addr().String()}
			p, err := sarama.NewSyncProducer(addrs, config("b=o,b", testUsers["b=o,b"]))
			require.NoError(t, err)
			var msgs []*sarama.ProducerMessage
			for i := range 20 {
				msgs = append(msgs, &sarama.ProducerMessage{Topic: "secure", Value: sarama.StringEncoder(fmt.Sprintf("sarama %d", i))})
			}
			require.NoError(t, p.SendMessages(msgs))
			require.NoError(t, p.Close())
			for i, m := range msgs {
				got, err := s.Get("secure", int(m.Partition), m.Offset)
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("sarama %d", i), string(got.Value))
			}

			_, err = sarama.NewSyncProducer(addrs, config("alice", "wrong"))
			require.Error(t, err)
			if tt.version == sarama.SASLHandshakeV1 {
				require.True(t, errors.Is(err, sarama.ErrSASLAuthenticationFailed), "%v", err)
			}
		})
	}
}
