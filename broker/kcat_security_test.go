package broker_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// TestKcatSecurity produces and consumes with Debian's librdkafka
// (through kcat) over each security protocol: SASL_PLAINTEXT with PLAIN,
// SCRAM-SHA-256 and SCRAM-SHA-512, SSL trusting the test CA
// (ssl.ca.location), with a client certificate the broker requires, and
// SASL_SSL; a wrong password fails, and so does SSL without the client
// certificate the broker requires.
func TestKcatSecurity(t *testing.T) {
	kcat := lookKcat(t)
	pki := newTestPKI(t)
	for _, tt := range []struct {
		name  string
		opts  broker.Options
		props []string
	}{
		{"SASL_PLAINTEXT PLAIN", broker.Options{SASL: &broker.SASL{Users: testUsers}},
			[]string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanisms=PLAIN"}},
		{"SASL_PLAINTEXT SCRAM-SHA-256", broker.Options{SASL: &broker.SASL{Users: testUsers}},
			[]string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanisms=SCRAM-SHA-256"}},
		{"SASL_PLAINTEXT SCRAM-SHA-512", broker.Options{SASL: &broker.SASL{Users: testUsers}},
			[]string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanisms=SCRAM-SHA-512"}},
		{"SSL", broker.Options{TLS: pki.serverConfig()},
			[]string{"security.protocol=SSL", "ssl.ca.location=" + pki.caFile}},
		{"SSL with a client certificate", broker.Options{TLS: pki.mutualConfig()},
			[]string{"security.protocol=SSL", "ssl.ca.location=" + pki.caFile,
				"ssl.certificate.location=" + pki.clientCertFile, "ssl.key.location=" + pki.clientKeyFile}},
		{"SASL_SSL SCRAM-SHA-512", broker.Options{TLS: pki.serverConfig(), SASL: &broker.SASL{Users: testUsers}},
			[]string{"security.protocol=SASL_SSL", "ssl.ca.location=" + pki.caFile, "sasl.mechanisms=SCRAM-SHA-512"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := serve(t, &tt.opts)
			require.NoError(t, s.CreateTopic("secure", strata.TopicConfig{}))
			args := []string{"-b", srv.Addr().String(), "-t", "secure", "-p", "0"}
			for _, p := range tt.props {
				args = append(args, "-X", p)
			}
			user := args
			if tt.opts.SASL != nil {
				user = append(append([]string(nil), args...), "-X", "sasl.username=b=o,b", "-X", "sasl.password="+testUsers["b=o,b"])
			}
			var lines []string
			for i := range 50 {
				lines = append(lines, fmt.Sprintf("secure value %d", i))
			}
			input := strings.Join(lines, "\n") + "\n"
			runKcat(t, kcat, input, append([]string{"-P", "-X", "enable.idempotence=true"}, user...)...)
			end, err := s.ListOffsets("secure", 0, strata.Latest)
			require.NoError(t, err)
			require.Equal(t, int64(50), end)
			out := runKcat(t, kcat, "", append([]string{"-C", "-o", "beginning", "-e", "-q"}, user...)...)
			require.Equal(t, input, out)

			if tt.opts.SASL != nil {
				wrong := append(append([]string(nil), args...), "-X", "sasl.username=alice", "-X", "sasl.password=wrong")
				_, stderr, err := runKcatErr(t, kcat, append([]string{"-L", "-m", "1"}, wrong...)...)
				require.Error(t, err)
				require.Contains(t, stderr, "Authentication failed")
			}
			if tt.opts.TLS != nil && tt.opts.TLS.ClientAuth == tls.RequireAndVerifyClientCert {
				without := []string{"-L", "-m", "1", "-b", srv.Addr().String(), "-X", "security.protocol=SSL", "-X", "ssl.ca.location=" + pki.caFile}
				_, _, err := runKcatErr(t, kcat, without...)
				require.Error(t, err, "no client certificate")
			}
		})
	}
}

// runKcatErr runs kcat, which is to fail, and returns its output.
func runKcatErr(t *testing.T, kcat string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}
