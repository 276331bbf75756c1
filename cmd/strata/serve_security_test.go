package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// writePKI writes to dir a self-signed CA (ca.pem) and what it signed: a
// server certificate for 127.0.0.1 and localhost (server.pem,
// server.key) and a client one (client.pem, client.key).
func writePKI(t *testing.T, dir string) {
	t.Helper()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "strata test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err = x509.ParseCertificate(caDER)
	require.NoError(t, err)
	write := func(name, typ string, der []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
	}
	write("ca.pem", "CERTIFICATE", caDER)
	for i, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		name := []string{"server", "client"}[i]
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: "strata test " + name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		require.NoError(t, err)
		keyDER, err := x509.MarshalECPrivateKey(key)
		require.NoError(t, err)
		write(name+".pem", "CERTIFICATE", der)
		write(name+".key", "EC PRIVATE KEY", keyDER)
	}
}

// runKcatErr runs kcat and returns its error, with stderr.
func runKcatErr(kcat string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, args...).CombinedOutput()
	return string(out), err
}

// TestServeKcatSecurity runs strata serve with TLS that requires a client
// certificate and SASL/SCRAM users from a file and from a flag: kcat with
// the CA, its certificate and a user's password produces and consumes; a
// wrong password, or no client certificate, is refused.
func TestServeKcatSecurity(t *testing.T) {
	kcat := lookKcat(t)
	tmp := t.TempDir()
	writePKI(t, tmp)
	users := filepath.Join(tmp, "users.txt")
	require.NoError(t, os.WriteFile(users, []byte("# the test's users\nalice:alice-secret\n\nbob:b:o:b\n"), 0o600))
	f := func(name string) string { return filepath.Join(tmp, name) }
	srv := startServe(t, filepath.Join(tmp, "data"), "--auto-create-topics",
		"--tls-cert", f("server.pem"), "--tls-key", f("server.key"), "--tls-client-ca", f("ca.pem"),
		"--sasl-mechanism", "SCRAM-SHA-256,SCRAM-SHA-512", "--sasl-users", users, "--sasl-user", "carol:carol-secret")
	tlsArgs := []string{"-b", srv.kafka, "-X", "security.protocol=SASL_SSL", "-X", "ssl.ca.location=" + f("ca.pem"),
		"-X", "ssl.certificate.location=" + f("client.pem"), "-X", "ssl.key.location=" + f("client.key")}
	as := func(mech, user, pass string) []string {
		return append(append([]string(nil), tlsArgs...), "-X", "sasl.mechanisms="+mech, "-X", "sasl.username="+user, "-X", "sasl.password="+pass)
	}
	input := "one\ntwo\nthree\n"
	runKcat(t, kcat, input, append([]string{"-P", "-t", "secure", "-p", "0"}, as("SCRAM-SHA-256", "alice", "alice-secret")...)...)
	out := runKcat(t, kcat, "", append([]string{"-C", "-t", "secure", "-o", "beginning", "-e", "-q"}, as("SCRAM-SHA-512", "bob", "b:o:b")...)...)
	require.Equal(t, input, out)
	out = runKcat(t, kcat, "", append([]string{"-C", "-t", "secure", "-o", "beginning", "-e", "-q"}, as("SCRAM-SHA-512", "carol", "carol-secret")...)...)
	require.Equal(t, input, out)

	msg, err := runKcatErr(kcat, append([]string{"-L", "-m", "2"}, as("SCRAM-SHA-256", "alice", "wrong")...)...)
	require.Error(t, err)
	require.Contains(t, msg, "Authentication failed")
	msg, err = runKcatErr(kcat, append([]string{"-L", "-m", "2"}, as("PLAIN", "alice", "alice-secret")...)...)
	require.Error(t, err, "PLAIN is not offered: %s", msg)
	noCert := []string{"-L", "-m", "2", "-b", srv.kafka, "-X", "security.protocol=SASL_SSL", "-X", "ssl.ca.location=" + f("ca.pem"),
		"-X", "sasl.mechanisms=SCRAM-SHA-256", "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret"}
	msg, err = runKcatErr(kcat, noCert...)
	require.Error(t, err, "no client certificate: %s", msg)

	code, rest := srv.stop(t, syscall.SIGINT)
	require.Equal(t, 0, code, rest)
	require.False(t, strings.Contains(rest, "panic"), rest)
}
