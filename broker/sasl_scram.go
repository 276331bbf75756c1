package broker

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"strconv"
	"strings"
)

// scramSaltBytes is the length of the salts the broker makes.
const scramSaltBytes = 16

// scramHash returns the hash of a SCRAM mechanism, nil for another
// mechanism.
func scramHash(mechanism string) func() hash.Hash {
	switch mechanism {
	case MechanismSCRAMSHA256:
		return sha256.New
	case MechanismSCRAMSHA512:
		return sha512.New
	}
	return nil
}

// scramCredential is what a server keeps of a user's password for SCRAM
// (RFC 5802 section 3; Kafka's ScramCredential):
//
//	SaltedPassword = PBKDF2(password, salt, iterations)
//	StoredKey      = H(HMAC(SaltedPassword, "Client Key"))
//	ServerKey      = HMAC(SaltedPassword, "Server Key")
type scramCredential struct {
	salt       []byte
	iterations int
	storedKey  []byte
	serverKey  []byte
}

// newSCRAMCredential derives password's credential with hash h; a nil
// salt means a fresh random one.
func newSCRAMCredential(h func() hash.Hash, password string, salt []byte, iterations int) (scramCredential, error) {
	if salt == nil {
		salt = make([]byte, scramSaltBytes)
		_, _ = rand.Read(salt)
	}
	salted, err := pbkdf2.Key(h, password, salt, iterations, h().Size())
	if err != nil {
		return scramCredential{}, err
	}
	clientKey := hmacOf(h, salted, []byte("Client Key"))
	stored := h()
	stored.Write(clientKey)
	return scramCredential{salt: salt, iterations: iterations, storedKey: stored.Sum(nil),
		serverKey: hmacOf(h, salted, []byte("Server Key"))}, nil
}

func hmacOf(h func() hash.Hash, key, msg []byte) []byte {
	m := hmac.New(h, key)
	m.Write(msg)
	return m.Sum(nil)
}

// scramCredential returns user's credential for mechanism, and whether
// the user exists. For a user that does not, it returns a made-up one,
// with a salt that is the same at every attempt, that no proof matches:
// the exchange goes on to fail at its last step, as it would for a wrong
// password, not telling the two apart. With the Password callback, a
// known user's salt is that same one (the user's, keyed by the server's
// secret), so that neither the salt nor whether it changes between
// attempts tells the two apart either.
func (ss *saslServer) scramCredential(mechanism, user string) (scramCredential, bool) {
	h := scramHash(mechanism)
	salt := hmacOf(sha256.New, ss.secret, []byte(mechanism+"\x00"+user))[:scramSaltBytes]
	if ss.users != nil {
		if c, ok := ss.scram[mechanism][user]; ok {
			return c, true
		}
	} else if pass, ok := ss.password(user); ok {
		if c, err := newSCRAMCredential(h, pass, salt, ss.iterations); err == nil {
			return c, true
		}
	}
	fake := scramCredential{salt: salt, iterations: ss.iterations,
		storedKey: make([]byte, h().Size()), serverKey: make([]byte, h().Size())}
	_, _ = rand.Read(fake.storedKey)
	if ss.password != nil {
		// Spend the time a known user's derivation takes.
		_, _ = newSCRAMCredential(h, string(fake.storedKey), salt, ss.iterations)
	}
	return fake, false
}

// scramSession is a SCRAM exchange (RFC 5802 section 5), without channel
// binding and without extensions, as Kafka's ScramSaslServer serves it:
//
//	client-first: gs2-header client-first-bare
//	              gs2-header = "n," ["a=" authzid] ","
//	              client-first-bare = "n=" user ",r=" client-nonce
//	server-first: "r=" client-nonce server-nonce ",s=" base64(salt) ",i=" iterations
//	client-final: "c=" base64(gs2-header) ",r=" client-nonce server-nonce ",p=" base64(proof)
//	server-final: "v=" base64(ServerSignature)
//
// where, with AuthMessage = client-first-bare "," server-first ","
// client-final without ",p=...",
//
//	ClientSignature = HMAC(StoredKey, AuthMessage)
//	proof           = ClientKey XOR ClientSignature
//	ServerSignature = HMAC(ServerKey, AuthMessage)
//
// and the server checks H(proof XOR ClientSignature) = StoredKey.
type scramSession struct {
	srv       *saslServer
	mechanism string
	hash      func() hash.Hash
	nonce     []byte // the server's part, printable; nil for a random one
	steps     int

	gs2         string // the gs2 header the client-final must repeat
	first       string // client-first-bare
	serverFirst string
	fullNonce   string
	cred        scramCredential
	known       bool // the user exists
	name        string
	done        bool
}

// newSCRAMSession starts an exchange of mechanism; nonce is the server's
// part of the nonce, nil for a random one.
func newSCRAMSession(srv *saslServer, mechanism string, nonce []byte) *scramSession {
	return &scramSession{srv: srv, mechanism: mechanism, hash: scramHash(mechanism), nonce: nonce}
}

func (s *scramSession) user() string { return s.name }

func (s *scramSession) step(in []byte) ([]byte, bool, error) {
	s.steps++
	switch s.steps {
	case 1:
		return s.clientFirst(in)
	case 2:
		return s.clientFinal(in)
	}
	return nil, false, failed("the %s exchange is over", s.mechanism)
}

func (s *scramSession) clientFirst(in []byte) ([]byte, bool, error) {
	m, err := parseClientFirst(in)
	if err != nil {
		return nil, false, err
	}
	if m.authzid != "" && m.authzid != m.user {
		return nil, false, failed("%s authorization id %q is not the user's own name", s.mechanism, m.authzid)
	}
	s.gs2, s.first, s.name = m.gs2, m.bare, m.user
	s.cred, s.known = s.srv.scramCredential(s.mechanism, m.user)
	nonce := s.nonce
	if nonce == nil {
		b := make([]byte, 18)
		_, _ = rand.Read(b)
		nonce = []byte(base64.RawURLEncoding.EncodeToString(b))
	}
	s.fullNonce = m.nonce + string(nonce)
	s.serverFirst = "r=" + s.fullNonce + ",s=" + base64.StdEncoding.EncodeToString(s.cred.salt) + ",i=" + strconv.Itoa(s.cred.iterations)
	return []byte(s.serverFirst), false, nil
}

func (s *scramSession) clientFinal(in []byte) ([]byte, bool, error) {
	m, err := parseClientFinal(in)
	if err != nil {
		return nil, false, err
	}
	if m.channel != base64.StdEncoding.EncodeToString([]byte(s.gs2)) {
		return nil, false, failed("%s client-final channel binding %q is not the client-first's gs2 header", s.mechanism, m.channel)
	}
	// The nonce ends with the server-first's, as Kafka's ScramSaslServer
	// checks it, rather than equal to it: librdkafka (2.0.2 at least)
	// puts its own nonce before the server-first's, which already starts
	// with it. The server's part is in it all the same.
	if !strings.HasSuffix(m.nonce, s.fullNonce) {
		return nil, false, failed("%s client-final nonce does not end with the server-first's", s.mechanism)
	}
	proof, err := base64.StdEncoding.DecodeString(m.proof)
	if err != nil || len(proof) != s.hash().Size() {
		return nil, false, failed("%s client proof is not %d bytes of base64", s.mechanism, s.hash().Size())
	}
	auth := []byte(s.first + "," + s.serverFirst + "," + m.withoutProof)
	clientKey := hmacOf(s.hash, s.cred.storedKey, auth)
	for i := range clientKey {
		clientKey[i] ^= proof[i]
	}
	h := s.hash()
	h.Write(clientKey)
	if subtle.ConstantTimeCompare(h.Sum(nil), s.cred.storedKey) != 1 || !s.known {
		return nil, false, failed("invalid credentials with SASL mechanism %s", s.mechanism)
	}
	s.done = true
	return []byte("v=" + base64.StdEncoding.EncodeToString(hmacOf(s.hash, s.cred.serverKey, auth))), true, nil
}

// clientFirst is a parsed SCRAM client-first message.
type clientFirst struct {
	gs2     string // the gs2 header, "n,,", say
	authzid string
	user    string
	nonce   string
	bare    string // client-first-message-bare
}

// parseClientFirst parses a client-first message: a gs2 header without
// channel binding ("n" or "y": the client would bind, but the server
// offers no -PLUS mechanism), the user name, the nonce, and nothing else:
// an extension (tokenauth=true, KIP-48's delegation tokens, say) or the
// reserved "m=" fails.
func parseClientFirst(in []byte) (clientFirst, error) {
	var m clientFirst
	s := string(in)
	if !strings.HasPrefix(s, "n,") && !strings.HasPrefix(s, "y,") {
		return m, failed("SCRAM client-first gs2 header does not start with \"n,\" (channel binding is not supported)")
	}
	rest := s[2:]
	if strings.HasPrefix(rest, "a=") {
		end := strings.IndexByte(rest, ',')
		if end < 0 {
			return m, failed("SCRAM client-first gs2 header has no end")
		}
		var ok bool
		if m.authzid, ok = saslName(rest[2:end]); !ok || m.authzid == "" {
			return m, failed("SCRAM client-first authorization id %q is not a saslname", rest[2:end])
		}
		rest = rest[end:]
	}
	if !strings.HasPrefix(rest, ",") {
		return m, failed("SCRAM client-first gs2 header does not end in \",\"")
	}
	m.gs2, m.bare = s[:len(s)-len(rest)+1], rest[1:]
	attrs := strings.Split(m.bare, ",")
	if strings.HasPrefix(attrs[0], "m=") {
		return m, failed("SCRAM client-first has the reserved attribute m")
	}
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		return m, failed("SCRAM client-first-message-bare is not n=user,r=nonce")
	}
	if len(attrs) > 2 {
		return m, failed("SCRAM extensions are not supported (%q)", attrs[2])
	}
	var ok bool
	if m.user, ok = saslName(attrs[0][2:]); !ok || m.user == "" {
		return m, failed("SCRAM client-first user name %q is not a saslname", attrs[0][2:])
	}
	m.nonce = attrs[1][2:]
	if !printable(m.nonce) {
		return m, failed("SCRAM client nonce is empty or not printable")
	}
	return m, nil
}

// clientFinal is a parsed SCRAM client-final message.
type clientFinal struct {
	channel      string // base64
	nonce        string
	proof        string // base64
	withoutProof string // client-final-message-without-proof
}

// parseClientFinal parses a client-final message: c=, r= and p=, in that
// order, and nothing else.
func parseClientFinal(in []byte) (clientFinal, error) {
	var m clientFinal
	attrs := strings.Split(string(in), ",")
	if len(attrs) != 3 || !strings.HasPrefix(attrs[0], "c=") || !strings.HasPrefix(attrs[1], "r=") || !strings.HasPrefix(attrs[2], "p=") {
		return m, failed("SCRAM client-final is not c=binding,r=nonce,p=proof")
	}
	m.channel, m.nonce, m.proof = attrs[0][2:], attrs[1][2:], attrs[2][2:]
	m.withoutProof = attrs[0] + "," + attrs[1]
	return m, nil
}

// saslName decodes a SCRAM saslname, whose "=2C" and "=3D" stand for ","
// and "=" (RFC 5802 section 5.1); false if it has another "=" or a NUL.
func saslName(s string) (string, bool) {
	if !strings.ContainsAny(s, "=\x00") {
		return s, true
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", false
	}
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// printable says whether s is a SCRAM nonce: printable ASCII but ",", at
// least one.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e || s[i] == ',' {
			return false
		}
	}
	return s != ""
}
