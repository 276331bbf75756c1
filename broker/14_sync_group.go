package broker

import (
	"bytes"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleSyncGroup hands out the assignment of a generation, Kafka's
// GroupCoordinator.handleSyncGroup: the leader's request carries every
// member's assignment (its client-side assignor made them), and the
// response of every member waits for it; the group is then Stable, and
// its membership is recorded in the store (Store.PublishGroup). A
// SyncGroup of a Stable group returns the member's assignment again.
// During a rebalance it is REBALANCE_IN_PROGRESS, at another generation
// ILLEGAL_GENERATION, from a member the group does not know
// UNKNOWN_MEMBER_ID, with an instance id of another member
// FENCED_INSTANCE_ID. Like JoinGroup it blocks its connection while it
// waits.
func handleSyncGroup(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SyncGroupRequest)
	if req.Group == "" {
		return syncError(errInvalidGroupID), nil
	}
	gs := &srv.groups
	gs.mu.Lock()
	wait, resp := gs.syncLocked(req)
	gs.mu.Unlock()
	if resp != nil {
		return resp, nil
	}
	return awaitGroup(srv, wait)
}

// syncLocked handles req: it returns the channel its response will come
// on, or the response now.
func (gs *groups) syncLocked(req *kmsg.SyncGroupRequest) (chan *kmsg.SyncGroupResponse, *kmsg.SyncGroupResponse) {
	g := gs.groupLocked(req.Group)
	if g == nil {
		return nil, syncError(errUnknownMemberID)
	}
	if code := g.checkMemberLocked(req.MemberID, str(req.InstanceID)); code != errNone {
		return nil, syncError(code)
	}
	m := g.members[req.MemberID]
	switch {
	case req.Generation != g.generation:
		return nil, syncError(errIllegalGeneration)
	case req.ProtocolType != nil && *req.ProtocolType != g.protocolType,
		req.Protocol != nil && *req.Protocol != g.protocol:
		return nil, syncError(errInconsistentGroupProtocol)
	}
	switch g.state {
	case groupPreparingRebalance:
		return nil, syncError(errRebalanceInProgress)
	case groupStable:
		g.beatLocked(m)
		return nil, g.syncResponseLocked(m)
	case groupCompletingRebalance:
	default:
		return nil, syncError(errUnknownMemberID)
	}
	ch := make(chan *kmsg.SyncGroupResponse, 1)
	if m.sync != nil {
		m.sync <- syncError(errRebalanceInProgress)
	}
	m.sync = ch
	if m.timer != nil {
		m.timer.Stop()
	}
	if m.id == g.leader {
		for _, a := range req.GroupAssignment {
			if o := g.members[a.MemberID]; o != nil {
				o.assignment = bytes.Clone(a.MemberAssignment) // the request's bytes are the connection's buffer
			}
		}
		g.state = groupStable
		g.publishLocked(g.protocolType)
		for _, o := range g.members {
			if o.sync != nil {
				o.sync <- g.syncResponseLocked(o)
				o.sync = nil
				g.beatLocked(o)
			}
		}
	}
	return ch, nil
}

// syncResponseLocked is m's SyncGroup response: its assignment.
func (g *wireGroup) syncResponseLocked(m *wireMember) *kmsg.SyncGroupResponse {
	resp := kmsg.NewPtrSyncGroupResponse()
	protocolType, protocol := g.protocolType, g.protocol
	resp.ProtocolType, resp.Protocol = &protocolType, &protocol
	resp.MemberAssignment = m.assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	return resp
}

// syncError is a SyncGroup response with code.
func syncError(code int16) *kmsg.SyncGroupResponse {
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.ErrorCode = code
	return resp
}
