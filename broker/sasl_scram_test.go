package broker

import (
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestSCRAMRFC7677 runs RFC 7677's SCRAM-SHA-256 example exchange (user
// "user", password "pencil") against the server side: its server-first
// and server-final messages, byte for byte.
func TestSCRAMRFC7677(t *testing.T) {
	salt, err := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	require.NoError(t, err)
	cred, err := newSCRAMCredential(sha256.New, "pencil", salt, 4096)
	require.NoError(t, err)
	ss := &saslServer{mechanisms: []string{MechanismSCRAMSHA256}, users: map[string]string{"user": "pencil"},
		iterations: 4096, scram: map[string]map[string]scramCredential{MechanismSCRAMSHA256: {"user": cred}}}
	const clientFinal = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	s := newSCRAMSession(ss, MechanismSCRAMSHA256, []byte("%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"))
	out, done, err := s.step([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
	require.NoError(t, err)
	require.False(t, done)
	require.Equal(t, "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", string(out))
	out, done, err = s.step([]byte(clientFinal))
	require.NoError(t, err)
	require.True(t, done)
	require.Equal(t, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", string(out))
	require.Equal(t, "user", s.user())
	_, _, err = s.step([]byte(clientFinal))
	require.ErrorIs(t, err, errSASLFailed, "a third message")

	// A nonce without the server's part fails; one that ends with the
	// server-first's, as librdkafka sends it, is taken.
	for nonce, ok := range map[string]bool{"rOprNGfwEbeRWgbNEkqO": false, "rOprNGfwEbeRWgbNEkqOrOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0": true} {
		s := newSCRAMSession(ss, MechanismSCRAMSHA256, []byte("%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"))
		_, _, err = s.step([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
		require.NoError(t, err)
		_, _, err = s.step([]byte("c=biws,r=" + nonce + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
		require.ErrorIs(t, err, errSASLFailed)
		if ok {
			require.ErrorContains(t, err, "invalid credentials", "the nonce taken, the proof (of another nonce) not")
		} else {
			require.ErrorContains(t, err, "nonce")
		}
	}

	// The same exchange with one bit of the proof flipped, or another
	// password, fails at the client-final.
	for name, pass := range map[string]string{"flipped proof": "pencil", "another password": "pencil2"} {
		c, err := newSCRAMCredential(sha256.New, pass, salt, 4096)
		require.NoError(t, err)
		ss.scram[MechanismSCRAMSHA256]["user"] = c
		s := newSCRAMSession(ss, MechanismSCRAMSHA256, []byte("%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"))
		_, _, err = s.step([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
		require.NoError(t, err)
		final := clientFinal
		if name == "flipped proof" {
			final = strings.Replace(final, "p=dHzb", "p=eHzb", 1)
		}
		_, done, err := s.step([]byte(final))
		require.ErrorIs(t, err, errSASLFailed, name)
		require.False(t, done)
	}
}

// TestSCRAMUnknownUser checks that an unknown user gets a server-first
// like a known one's, with the same salt at each attempt, and fails only
// at the client-final.
func TestSCRAMUnknownUser(t *testing.T) {
	ss, err := newSASLServer(&SASL{Mechanisms: []string{MechanismSCRAMSHA256}, Users: map[string]string{"user": "pencil"}, SCRAMIterations: 4096})
	require.NoError(t, err)
	first := func(user string) string {
		s := newSCRAMSession(ss, MechanismSCRAMSHA256, []byte("server"))
		out, _, err := s.step([]byte("n,,n=" + user + ",r=client"))
		require.NoError(t, err)
		return string(out)
	}
	require.Equal(t, first("nobody"), first("nobody"))
	require.NotEqual(t, first("nobody"), first("somebody"))
	require.Len(t, first("nobody"), len(first("user")))
	s := newSCRAMSession(ss, MechanismSCRAMSHA256, []byte("server"))
	_, _, err = s.step([]byte("n,,n=nobody,r=client"))
	require.NoError(t, err)
	_, _, err = s.step([]byte("c=biws,r=clientserver,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
	require.ErrorIs(t, err, errSASLFailed)
}

// TestParseClientFirst checks the client-first messages taken and
// refused.
func TestParseClientFirst(t *testing.T) {
	for _, tt := range []struct {
		in       string
		user     string
		authzid  string
		gs2, bad string
	}{
		{in: "n,,n=user,r=abc", user: "user", gs2: "n,,"},
		{in: "y,,n=user,r=abc", user: "user", gs2: "y,,"},
		{in: "n,a=us=2Cer,n=us=2Cer,r=abc", user: "us,er", authzid: "us,er", gs2: "n,a=us=2Cer,"},
		{in: "n,,n=a=3Db=2C,r=abc", user: "a=b,", gs2: "n,,"},
		{in: "p=tls-unique,,n=user,r=abc", bad: "channel binding"},
		{in: "n,,m=ext,n=user,r=abc", bad: "reserved"},
		{in: "n,,n=user,r=abc,tokenauth=true", bad: "extensions"},
		{in: "n,,n=us=er,r=abc", bad: "saslname"},
		{in: "n,,n=,r=abc", bad: "saslname"},
		{in: "n,,n=user,r=", bad: "nonce"},
		{in: "n,,n=user,r=a\x7fb", bad: "nonce"},
		{in: "n,,r=abc,n=user", bad: "n=user,r=nonce"},
		{in: "n,,n=user", bad: "n=user,r=nonce"},
		{in: "n,a=user", bad: "no end"},
		{in: "n,x,n=user,r=abc", bad: "does not end"},
		{in: "", bad: "channel binding"},
	} {
		m, err := parseClientFirst([]byte(tt.in))
		if tt.bad != "" {
			require.ErrorIs(t, err, errSASLFailed, "%q", tt.in)
			require.ErrorContains(t, err, tt.bad, "%q", tt.in)
			continue
		}
		require.NoError(t, err, "%q", tt.in)
		require.Equal(t, tt.user, m.user, "%q", tt.in)
		require.Equal(t, tt.authzid, m.authzid, "%q", tt.in)
		require.Equal(t, tt.gs2, m.gs2, "%q", tt.in)
		require.Equal(t, tt.in[len(tt.gs2):], m.bare, "%q", tt.in)
		require.Equal(t, "abc", m.nonce, "%q", tt.in)
	}
}

// FuzzSASLExchange feeds a connection that has not authenticated any
// frames, Kafka requests or bare tokens, through authFrame: none panics
// or authenticates, an error is a failed or refused authentication or a
// malformed frame, and what is written back is a size-prefixed frame.
func FuzzSASLExchange(f *testing.F) {
	fr := func(req kmsg.Request) []byte { return frameOf(req) }
	hs := func(v int16, m string) []byte {
		req := kmsg.NewPtrSASLHandshakeRequest()
		req.SetVersion(v)
		req.Mechanism = m
		return fr(req)
	}
	auth := func(token string) []byte {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.SetVersion(2)
		req.SASLAuthBytes = []byte(token)
		return fr(req)
	}
	f.Add(hs(1, MechanismSCRAMSHA256), auth("n,,n=user,r=abc"), auth("c=biws,r=abcdef,p=AAAA"))
	f.Add(hs(0, MechanismSCRAMSHA512), []byte("n,a=user,n=user,r=abc"), []byte("c=bixx,r=abc,p="))
	f.Add(hs(1, MechanismPlain), auth("\x00user\x00wrong"), auth(""))
	f.Add(hs(0, MechanismPlain), []byte("user\x00user\x00wrong"), []byte{})
	f.Add(fr(kmsg.NewPtrApiVersionsRequest()), hs(1, "GSSAPI"), hs(1, MechanismPlain))
	ss, err := newSASLServer(&SASL{Mechanisms: []string{MechanismSCRAMSHA512, MechanismSCRAMSHA256, MechanismPlain},
		Users: map[string]string{"user": "pencil-0b6f4a3c9d2e8f17a5c4b3d2e1f0a9b8"}, SCRAMIterations: MinSCRAMIterations})
	require.NoError(f, err)
	srv := testServer(f)
	srv.sasl = ss
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		sc := &saslConn{srv: ss}
		for _, frame := range [][]byte{a, b, c} {
			out, err := srv.authFrame(sc, frame)
			if out != nil {
				require.GreaterOrEqual(t, len(out), 4)
				require.Equal(t, len(out)-4, int(binary.BigEndian.Uint32(out)))
			}
			if err != nil {
				require.True(t, errors.Is(err, errSASLFailed) || errors.Is(err, errUnauthenticated) || errors.Is(err, errMalformed), "%v", err)
				return
			}
			require.False(t, sc.done, "authenticated without the password")
		}
	})
}

// TestSCRAMPasswordCallbackUnknownUser: with the Password callback, the
// server-first of a user the callback knows is as stable from one attempt
// to the next as an unknown user's, so that comparing two attempts does
// not tell whether a user exists; and the known user still authenticates.
func TestSCRAMPasswordCallbackUnknownUser(t *testing.T) {
	for _, mech := range []string{MechanismSCRAMSHA256, MechanismSCRAMSHA512} {
		ss, err := newSASLServer(&SASL{Mechanisms: []string{mech}, SCRAMIterations: 4096,
			Password: func(user string) (string, bool) { return "pencil", user == "user" }})
		require.NoError(t, err)
		first := func(user string) string {
			s := newSCRAMSession(ss, mech, []byte("server"))
			out, _, err := s.step([]byte("n,,n=" + user + ",r=client"))
			require.NoError(t, err)
			return string(out)
		}
		require.Equal(t, first("nobody"), first("nobody"), mech)
		require.Equal(t, first("user"), first("user"), "%s: a known user's salt changes between attempts, an unknown one's does not", mech)
		require.NotEqual(t, first("user"), first("nobody"), mech)
		require.Len(t, first("nobody"), len(first("user")), mech)

		// The known user's exchange, end to end, as a client computes it.
		s := newSCRAMSession(ss, mech, []byte("server"))
		out, _, err := s.step([]byte("n,,n=user,r=client"))
		require.NoError(t, err)
		final := scramClientFinal(t, mech, "pencil", "n=user,r=client", string(out))
		_, done, err := s.step([]byte(final))
		require.NoError(t, err, mech)
		require.True(t, done, mech)
	}
}

// scramClientFinal computes a client's client-final message for password
// from the client-first-bare and the server-first (RFC 5802 section 3).
func scramClientFinal(t *testing.T, mech, password, bare, serverFirst string) string {
	h := scramHash(mech)
	var nonce, salt64, iters string
	for _, attr := range strings.Split(serverFirst, ",") {
		switch attr[:2] {
		case "r=":
			nonce = attr[2:]
		case "s=":
			salt64 = attr[2:]
		case "i=":
			iters = attr[2:]
		}
	}
	salt, err := base64.StdEncoding.DecodeString(salt64)
	require.NoError(t, err)
	n, err := strconv.Atoi(iters)
	require.NoError(t, err)
	salted, err := pbkdf2.Key(h, password, salt, n, h().Size())
	require.NoError(t, err)
	clientKey := hmacOf(h, salted, []byte("Client Key"))
	stored := h()
	stored.Write(clientKey)
	without := "c=biws,r=" + nonce
	sig := hmacOf(h, stored.Sum(nil), []byte(bare+","+serverFirst+","+without))
	for i := range clientKey {
		clientKey[i] ^= sig[i]
	}
	return without + ",p=" + base64.StdEncoding.EncodeToString(clientKey)
}
