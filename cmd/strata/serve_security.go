package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"os"
	"slices"
	"strings"

	"github.com/stratalog/strata/broker"
)

// tlsConfig is the listener's TLS config of --tls-cert, --tls-key and
// --tls-client-ca, nil for plain TCP.
func tlsConfig(certFile, keyFile, caFile string) (*tls.Config, error) {
	switch {
	case certFile == "" && keyFile == "" && caFile == "":
		return nil, nil
	case certFile == "" || keyFile == "":
		return nil, usagef("--tls-cert and --tls-key go together: give both, PEM files of the certificate chain and its private key")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, usagef("--tls-cert %s, --tls-key %s: %v", certFile, keyFile, err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, usagef("--tls-client-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("--tls-client-ca %s: no PEM certificate in it", caFile)
		}
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// saslMechanisms are the mechanisms --sasl-mechanism takes.
var saslMechanisms = []string{broker.MechanismPlain, broker.MechanismSCRAMSHA256, broker.MechanismSCRAMSHA512}

// saslConfig is the SASL config of --sasl-mechanism, --sasl-users and
// --sasl-user, nil without users.
func saslConfig(mechanisms []string, usersFile string, users []string) (*broker.SASL, error) {
	for _, m := range mechanisms {
		if !slices.Contains(saslMechanisms, strings.ToUpper(m)) {
			return nil, usagef("--sasl-mechanism %q: the mechanisms are %s", m, strings.Join(saslMechanisms, ", "))
		}
	}
	if usersFile == "" && len(users) == 0 {
		if len(mechanisms) > 0 {
			return nil, usagef("--sasl-mechanism needs users: give --sasl-user user:password or --sasl-users FILE")
		}
		return nil, nil
	}
	m := map[string]string{}
	if usersFile != "" {
		if err := readUsers(usersFile, m); err != nil {
			return nil, err
		}
	}
	for _, u := range users {
		name, pass, ok := strings.Cut(u, ":")
		if !ok || name == "" || pass == "" {
			return nil, usagef("--sasl-user %q: want user:password, neither empty", u)
		}
		m[name] = pass
	}
	var mechs []string
	for _, mech := range mechanisms {
		if mech = strings.ToUpper(mech); !slices.Contains(mechs, mech) {
			mechs = append(mechs, mech)
		}
	}
	return &broker.SASL{Mechanisms: mechs, Users: m}, nil
}

// readUsers adds the users of file, a user:password a line, to m.
func readUsers(file string, m map[string]string) error {
	f, err := os.Open(file)
	if err != nil {
		return usagef("--sasl-users: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, pass, ok := strings.Cut(text, ":")
		if !ok || name == "" || pass == "" {
			return usagef("--sasl-users %s, line %d: want user:password, neither empty", file, line)
		}
		m[name] = pass
		n++
	}
	if err := sc.Err(); err != nil {
		return usagef("--sasl-users %s: %v", file, err)
	}
	if n == 0 {
		return usagef("--sasl-users %s: no users in it (want a user:password a line)", file)
	}
	return nil
}
