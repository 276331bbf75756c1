package broker

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
)

// plainSession is a SASL/PLAIN exchange (RFC 4616): one message from the
// client,
//
//	[authzid] NUL authcid NUL passwd
//
// and an empty answer once the password is right. As Kafka's
// PlainSaslServer, it takes an authorization id only when it is empty or
// the user's own name.
type plainSession struct {
	srv  *saslServer
	name string
	done bool
}

func (s *plainSession) step(in []byte) ([]byte, bool, error) {
	if s.done {
		return nil, false, failed("SASL/PLAIN takes one message")
	}
	authzid, user, pass, err := parsePlain(in)
	if err != nil {
		return nil, false, err
	}
	if authzid != "" && authzid != user {
		return nil, false, failed("SASL/PLAIN authorization id %q is not the user's own name", authzid)
	}
	want, ok := s.srv.lookup(user)
	if !s.srv.samePassword(want, pass) || !ok {
		return nil, false, failed("invalid user name or password (SASL/PLAIN)")
	}
	s.name, s.done = user, true
	return []byte{}, true, nil
}

func (s *plainSession) user() string { return s.name }

// parsePlain splits a SASL/PLAIN message into its three fields; the user
// name and password are not empty, and none holds a NUL.
func parsePlain(in []byte) (authzid, user, pass string, err error) {
	fields := bytes.Split(in, []byte{0})
	if len(fields) != 3 {
		return "", "", "", failed("a SASL/PLAIN message is [authzid] NUL user NUL password: %d fields, not 3", len(fields))
	}
	if len(fields[1]) == 0 || len(fields[2]) == 0 {
		return "", "", "", failed("SASL/PLAIN user name or password empty")
	}
	return string(fields[0]), string(fields[1]), string(fields[2]), nil
}

// samePassword says whether two passwords are the same, in a time that
// tells neither their contents nor their lengths (ConstantTimeCompare
// returns at once for two lengths): it compares their HMACs under the
// server's secret.
func (ss *saslServer) samePassword(a, b string) bool {
	return subtle.ConstantTimeCompare(hmacOf(sha256.New, ss.secret, []byte(a)), hmacOf(sha256.New, ss.secret, []byte(b))) == 1
}
