package broker

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleSaslAuthenticate carries one step of the SASL exchange a
// SaslHandshake v1 started (KIP-152): the client's token in, the
// server's out. A failed step is SASL_AUTHENTICATION_FAILED with the
// reason, and the connection closes. session_lifetime_ms (v1 on) is
// SASL.SessionLifetime, 0 when sessions do not end (KIP-368). Before a
// SaslHandshake v1, after a v0 one, after the exchange has succeeded, or
// on a Server without SASL, it is ILLEGAL_SASL_STATE; the connection then
// closes unless it has authenticated (Kafka's KafkaApis answers the same
// on an authenticated connection).
func handleSaslAuthenticate(srv *Server, h header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SASLAuthenticateRequest)
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	resp.SASLAuthBytes = []byte{}
	sc := h.sasl
	switch {
	case sc == nil, sc.done:
		resp.ErrorCode = errIllegalSaslState
		msg := "SaslAuthenticate on a connection that has authenticated"
		if srv.sasl == nil {
			msg = "SaslAuthenticate on a listener without SASL"
		}
		resp.ErrorMessage = &msg
		return resp, nil
	case sc.session == nil || sc.raw:
		resp.ErrorCode = errIllegalSaslState
		msg := "SaslAuthenticate without a SaslHandshake v1 before it"
		resp.ErrorMessage = &msg
		sc.closing = fmt.Errorf("broker: %s: %w", msg, errUnauthenticated)
		return resp, nil
	}
	out, err := sc.step(req.SASLAuthBytes)
	if err != nil {
		resp.ErrorCode = errSaslAuthenticationFailed
		msg := "Authentication failed"
		if ae := (*authError)(nil); errors.As(err, &ae) {
			msg += ": " + ae.reason
		}
		resp.ErrorMessage = &msg
		return resp, nil
	}
	resp.SASLAuthBytes = out
	resp.SessionLifetimeMillis = sc.lifetimeMillis()
	return resp, nil
}
