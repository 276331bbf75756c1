package broker_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testPKI is a self-signed CA made for a test, and what it signed: a
// server certificate for 127.0.0.1 and localhost, and a client one.
type testPKI struct {
	pool   *x509.CertPool
	caFile string // the CA certificate, PEM, for librdkafka's ssl.ca.location
	server tls.Certificate
	client tls.Certificate
	// clientCertFile and clientKeyFile are the client's certificate and
	// key, PEM, for ssl.certificate.location and ssl.key.location.
	clientCertFile, clientKeyFile string
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "strata test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err = x509.ParseCertificate(caDER)
	require.NoError(t, err)
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage) tls.Certificate {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			DNSNames:     []string{"localhost"},
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		require.NoError(t, err)
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	}
	p := &testPKI{pool: x509.NewCertPool(), caFile: filepath.Join(t.TempDir(), "ca.pem")}
	p.pool.AddCert(ca)
	require.NoError(t, os.WriteFile(p.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600))
	p.server = leaf(2, "strata test broker", x509.ExtKeyUsageServerAuth)
	p.client = leaf(3, "strata test client", x509.ExtKeyUsageClientAuth)
	key, err := x509.MarshalECPrivateKey(p.client.PrivateKey.(*ecdsa.PrivateKey))
	require.NoError(t, err)
	p.clientCertFile, p.clientKeyFile = filepath.Join(t.TempDir(), "client.pem"), filepath.Join(t.TempDir(), "client.key")
	require.NoError(t, os.WriteFile(p.clientCertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.client.Certificate[0]}), 0o600))
	require.NoError(t, os.WriteFile(p.clientKeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: key}), 0o600))
	return p
}

// serverConfig is the broker's TLS config.
func (p *testPKI) serverConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.server}, MinVersion: tls.VersionTLS12}
}

// mutualConfig is the broker's TLS config requiring a client certificate
// of the test CA.
func (p *testPKI) mutualConfig() *tls.Config {
	c := p.serverConfig()
	c.ClientAuth = tls.RequireAndVerifyClientCert
	c.ClientCAs = p.pool
	return c
}

// clientConfig is a client's TLS config that trusts the test CA.
func (p *testPKI) clientConfig() *tls.Config {
	return &tls.Config{RootCAs: p.pool, MinVersion: tls.VersionTLS12}
}
