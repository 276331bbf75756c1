package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// runConfluentSecurity runs testdata/confluent_security.py's command
// with conf and decodes the JSON it prints into out.
func runConfluentSecurity(t *testing.T, python, addr string, conf map[string]string, out any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := json.Marshal(conf)
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, python, append([]string{"testdata/confluent_security.py", addr, string(b)}, args...)...)
	stdout, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "confluent_security.py %v: %s", args, stderr)
	require.NoError(t, json.Unmarshal(stdout, out), "confluent_security.py %v printed %q", args, stdout)
}

// TestConfluentKafkaSCRAM produces and consumes with Debian's
// python3-confluent-kafka over SASL_PLAINTEXT with SCRAM-SHA-256 and
// SCRAM-SHA-512, and over SASL_SSL; a wrong password fails with
// _AUTHENTICATION.
func TestConfluentKafkaSCRAM(t *testing.T) {
	python := lookConfluent(t)
	pki := newTestPKI(t)
	for _, tt := range []struct {
		name string
		opts broker.Options
		conf map[string]string
	}{
		{"SASL_PLAINTEXT SCRAM-SHA-256", broker.Options{SASL: &broker.SASL{Users: testUsers}},
			map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "SCRAM-SHA-256"}},
		{"SASL_PLAINTEXT SCRAM-SHA-512", broker.Options{SASL: &broker.SASL{Users: testUsers}},
			map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "SCRAM-SHA-512"}},
		{"SASL_SSL SCRAM-SHA-256", broker.Options{TLS: pki.serverConfig(), SASL: &broker.SASL{Users: testUsers}},
			map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-256", "ssl.ca.location": pki.caFile}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := serve(t, &tt.opts)
			addr := srv.Addr().String()
			require.NoError(t, s.CreateTopic("secure", strata.TopicConfig{}))
			conf := map[string]string{"sasl.username": "alice", "sasl.password": testUsers["alice"]}
			for k, v := range tt.conf {
				conf[k] = v
			}
			var produced struct{ Delivered int }
			runConfluentSecurity(t, python, addr, conf, &produced, "produce", "secure", "100")
			require.Equal(t, 100, produced.Delivered)
			end, err := s.ListOffsets("secure", 0, strata.Latest)
			require.NoError(t, err)
			require.Equal(t, int64(100), end)
			var consumed struct{ Values []string }
			runConfluentSecurity(t, python, addr, conf, &consumed, "consume", "secure", "100")
			require.Len(t, consumed.Values, 100)
			for i, v := range consumed.Values {
				require.Equal(t, fmt.Sprintf("secure value %d", i), v)
			}

			conf["sasl.password"] = "wrong"
			var md struct {
				Error    *string
				Reported []string
			}
			runConfluentSecurity(t, python, addr, conf, &md, "metadata")
			require.NotNil(t, md.Error)
			require.Contains(t, md.Reported, "_AUTHENTICATION")
		})
	}
}
