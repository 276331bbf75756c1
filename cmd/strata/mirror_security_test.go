package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
)

// TestMirrorSecurity mirrors a directory to strata serve as the Kafka
// cluster, over TLS with a client certificate and SASL/SCRAM: the records
// arrive, each on its partition, and the group's offset with them; a wrong
// password, or no TLS, is refused.
func TestMirrorSecurity(t *testing.T) {
	tmp := t.TempDir()
	writePKI(t, tmp)
	f := func(name string) string { return filepath.Join(tmp, name) }
	srv := startServe(t, f("served"), "--tls-cert", f("server.pem"), "--tls-key", f("server.key"),
		"--tls-client-ca", f("ca.pem"), "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "mirror:mirror-secret")

	src := f("src")
	s, err := strata.Open(src, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: 2}))
	for i := range 20 {
		_, err := s.Append(context.Background(), "orders", strata.Record{Key: fmt.Appendf(nil, "k%d", i%5), Value: fmt.Appendf(nil, "v%d", i)})
		require.NoError(t, err)
	}
	require.NoError(t, s.Commit("billing", "orders", 1, 3, ""))
	require.NoError(t, s.Close())

	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		a := &app{stdin: &bytes.Buffer{}, stdout: &stdout, stderr: &stderr, ctx: ctx}
		code := a.run(args)
		return code, stdout.String(), stderr.String()
	}
	secure := []string{"--tls-ca", f("ca.pem"), "--tls-cert", f("client.pem"), "--tls-key", f("client.key"),
		"--sasl-mechanism", "SCRAM-SHA-256"}
	mirrorArgs := func(extra ...string) []string {
		return append(append([]string{"--dir", src, "mirror", "--to", srv.kafka, "--topic", "orders", "--groups", ".*", "--once"}, secure...), extra...)
	}

	t.Setenv("STRATA_SASL_PASSWORD", "wrong")
	code, _, stderr := run(mirrorArgs("--sasl-user", "mirror")...)
	require.Equal(t, exitFailure, code, stderr)
	require.Contains(t, stderr, "SASL_AUTHENTICATION_FAILED")

	code, _, stderr = run("--dir", src, "mirror", "--to", srv.kafka, "--topic", "orders", "--once",
		"--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "mirror:mirror-secret")
	require.Equal(t, exitFailure, code, "no TLS: %s", stderr)
	require.Contains(t, stderr, "TLS")

	t.Setenv("STRATA_SASL_PASSWORD", "mirror-secret")
	code, stdout, stderr := run(mirrorArgs("--sasl-user", "mirror")...)
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `(?m)^orders +orders +0 +\d+ +\d+ +0 `, stdout)
	require.Regexp(t, `(?m)^billing +orders +orders +1 +3 +\d+$`, stdout)

	// What the served directory holds, read committed, is the source's.
	_, want, _ := run("--dir", src, "consume", "orders", "--format", "%p %k %s\n")
	code, got, stderr := run("--dir", f("served"), "consume", "orders", "--isolation", "read_committed", "--format", "%p %k %s\n")
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, want, got)
	code, got, stderr = run("--dir", f("served"), "groups", "describe", "billing")
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `(?m)^billing +orders +1 +\d+ `, got)
	require.False(t, strings.Contains(got, "orders  0"), got)

	code, _, stderr = run("--dir", src, "mirror", "--to", srv.kafka, "--topic", "orders", "--sasl-user", "x:y")
	require.Equal(t, exitUsage, code, stderr)
	require.Contains(t, stderr, "--sasl-user needs --sasl-mechanism")
	code, _, stderr = run("--dir", src, "mirror", "--to", srv.kafka, "--topic", "orders", "--tls-cert", f("client.pem"))
	require.Equal(t, exitUsage, code, stderr)
	require.Contains(t, stderr, "go together")
}
