package main

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// clientSecurity are mirror's flags for connecting to a cluster with TLS
// and SASL, as a Kafka client's security.protocol, ssl.* and sasl.*.
type clientSecurity struct {
	tls               bool
	caFile            string
	certFile, keyFile string
	mechanism         string
	user              string
}

func (c *clientSecurity) flags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&c.tls, "tls", false, "connect with TLS, verifying the cluster with the system's CAs (implied by --tls-ca and --tls-cert)")
	fl.StringVar(&c.caFile, "tls-ca", "", "a PEM file of the CAs to verify the cluster with")
	fl.StringVar(&c.certFile, "tls-cert", "", "a client certificate chain, a PEM file, for clusters that require one")
	fl.StringVar(&c.keyFile, "tls-key", "", "the private key of --tls-cert, a PEM file")
	fl.StringVar(&c.mechanism, "sasl-mechanism", "", "authenticate with SASL: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fl.StringVar(&c.user, "sasl-user", "", "the SASL user, user:password, or user with the password in $STRATA_SASL_PASSWORD")
}

// options returns the franz-go options of the flags, refusing bad values
// with a usage error.
func (c *clientSecurity) options() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if c.tls || c.caFile != "" || c.certFile != "" || c.keyFile != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if c.caFile != "" {
			pem, err := os.ReadFile(c.caFile)
			if err != nil {
				return nil, usagef("--tls-ca: %v", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, usagef("--tls-ca %s: no PEM certificate in it", c.caFile)
			}
		}
		if (c.certFile == "") != (c.keyFile == "") {
			return nil, usagef("--tls-cert and --tls-key go together: give both, PEM files of the certificate chain and its private key")
		}
		if c.certFile != "" {
			cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
			if err != nil {
				return nil, usagef("--tls-cert %s, --tls-key %s: %v", c.certFile, c.keyFile, err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if c.mechanism == "" {
		if c.user != "" {
			return nil, usagef("--sasl-user needs --sasl-mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
		}
		return opts, nil
	}
	user, pass, ok := strings.Cut(c.user, ":")
	if !ok {
		pass = os.Getenv("STRATA_SASL_PASSWORD")
	}
	if user == "" || pass == "" {
		return nil, usagef("--sasl-mechanism %s needs --sasl-user user:password (or user, with $STRATA_SASL_PASSWORD)", c.mechanism)
	}
	var m sasl.Mechanism
	switch strings.ToUpper(c.mechanism) {
	case "PLAIN":
		m = plain.Auth{User: user, Pass: pass}.AsMechanism()
	case "SCRAM-SHA-256":
		m = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		m = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
	default:
		return nil, usagef("--sasl-mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", c.mechanism)
	}
	return append(opts, kgo.SASL(m)), nil
}
