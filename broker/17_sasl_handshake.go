package broker

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleSaslHandshake picks the SASL mechanism of a connection that has
// not authenticated (KIP-43): from v1 its tokens then come in
// SaslAuthenticate requests (KIP-152), at v0 as bare size-prefixed
// frames. The response lists the mechanisms offered. A mechanism not
// offered is UNSUPPORTED_SASL_MECHANISM, and a second handshake
// ILLEGAL_SASL_STATE, after which the connection closes, as Kafka's
// SaslServerAuthenticator closes it. On a connection that has
// authenticated, it starts a re-authentication when sessions end
// (SASL.SessionLifetime, KIP-368), at v1 and with the session's
// mechanism, or the connection closes. Otherwise there, and on a Server
// without SASL, it is ILLEGAL_SASL_STATE and the connection stays open
// (Kafka's KafkaApis).
func handleSaslHandshake(srv *Server, h header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SASLHandshakeRequest)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	if srv.sasl != nil {
		resp.SupportedMechanisms = srv.sasl.mechanisms
	}
	sc := h.sasl
	switch {
	case sc == nil:
		resp.ErrorCode = errIllegalSaslState
	case sc.done:
		resp.ErrorCode = sc.reauthenticate(req.Version, req.Mechanism)
	case sc.session != nil:
		resp.ErrorCode = errIllegalSaslState
		sc.closing = fmt.Errorf("broker: a second SaslHandshake: %w", errUnauthenticated)
	case !sc.handshake(req.Mechanism, req.Version == 0):
		resp.ErrorCode = errUnsupportedSaslMechanism
		sc.closing = fmt.Errorf("broker: SASL mechanism %q not offered: %w", req.Mechanism, errSASLFailed)
	}
	return resp, nil
}
