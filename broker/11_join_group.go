package broker

import (
	"bytes"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleJoinGroup joins a member to a classic group, Kafka's
// GroupCoordinator.handleJoinGroup (kafka/coordinator/group): a new
// member gets an id (from v4 first in a MEMBER_ID_REQUIRED response, with
// which it joins again, KIP-394; a static member, v5+ group.instance.id,
// KIP-345, joins at once and takes its instance's place), and the
// response waits until the rebalance completes: every member has joined
// again, or the rebalance timeout has passed without those that have
// not. The leader's response lists the members with their metadata for
// the protocol chosen, the one every member supports; it assigns the
// partitions and sends the assignment with SyncGroup. A member whose
// protocols no member shares, or of another protocol type, gets
// INCONSISTENT_GROUP_PROTOCOL, as does any member of a group that has
// consumers in the process (strata.Consumer): a group is served either
// in the process or over the wire.
//
// The handler blocks its connection while it waits, as Kafka's does
// (a connection's requests are answered in order); Server.Close ends the
// wait and closes the connection.
func handleJoinGroup(srv *Server, h header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.JoinGroupRequest)
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	rebalance := session
	if req.Version >= 1 && req.RebalanceTimeoutMillis > 0 {
		rebalance = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	switch {
	case req.Group == "":
		return joinError(errInvalidGroupID, req.MemberID), nil
	case session < minSessionTimeout || session > maxSessionTimeout:
		return joinError(errInvalidSessionTimeout, req.MemberID), nil
	case req.ProtocolType == "" || len(req.Protocols) == 0:
		return joinError(errInconsistentGroupProtocol, req.MemberID), nil
	}
	j := joinRequest{
		req: req, session: session, rebalance: rebalance,
		instanceID: str(req.InstanceID), clientID: h.clientID, clientHost: h.host,
	}
	gs := &srv.groups
	gs.mu.Lock()
	g := gs.addLocked(srv, req.Group)
	wait, resp := g.joinLocked(&j)
	if resp != nil {
		g.releaseIfUnusedLocked()
	}
	gs.mu.Unlock()
	if resp != nil {
		return resp, nil
	}
	return awaitGroup(srv, wait)
}

// joinRequest is a JoinGroup request with its fields resolved.
type joinRequest struct {
	req                *kmsg.JoinGroupRequest
	session, rebalance time.Duration
	instanceID         string
	clientID           string
	clientHost         string
}

// joinLocked handles j: it returns the channel its response will come
// on, or the response now.
func (g *wireGroup) joinLocked(j *joinRequest) (chan *kmsg.JoinGroupResponse, *kmsg.JoinGroupResponse) {
	req := j.req
	if !g.claimLocked() {
		return nil, joinError(errInconsistentGroupProtocol, req.MemberID)
	}
	if _, known := g.static[j.instanceID]; req.MemberID == "" && (j.instanceID == "" || !known) {
		// A new member.
		switch {
		case len(g.members)+len(g.pending) >= maxGroupSize:
			return nil, joinError(errGroupMaxSizeReached, "")
		case g.srv.groups.mu.n >= maxWireMembers:
			return nil, joinError(errCoordinatorNotAvailable, "")
		}
	}
	if req.MemberID == "" {
		if j.instanceID != "" {
			if old, ok := g.static[j.instanceID]; ok {
				return g.replaceStaticLocked(g.members[old], j)
			}
		}
		if !g.supportsLocked(req.ProtocolType, req.Protocols, "") {
			return nil, joinError(errInconsistentGroupProtocol, "")
		}
		id := newMemberID(j.clientID)
		if req.Version >= 4 && j.instanceID == "" {
			g.addPendingLocked(id, j.session)
			return nil, joinError(errMemberIDRequired, id)
		}
		return g.addMemberLocked(id, j), nil
	}
	if t, ok := g.pending[req.MemberID]; ok {
		if !g.supportsLocked(req.ProtocolType, req.Protocols, "") {
			return nil, joinError(errInconsistentGroupProtocol, req.MemberID)
		}
		t.Stop()
		g.dropPendingLocked(req.MemberID)
		return g.addMemberLocked(req.MemberID, j), nil
	}
	if code := g.checkMemberLocked(req.MemberID, j.instanceID); code != errNone {
		return nil, joinError(code, req.MemberID)
	}
	m := g.members[req.MemberID]
	if !g.supportsLocked(req.ProtocolType, req.Protocols, m.id) {
		return nil, joinError(errInconsistentGroupProtocol, req.MemberID)
	}
	changed := m.updateLocked(j)
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	switch {
	case g.state == groupPreparingRebalance:
		m.waitJoin(ch)
		g.maybeCompleteJoinLocked()
	case !changed && (g.state == groupCompletingRebalance || g.state == groupStable && m.id != g.leader):
		// Nothing new: the member learns the current generation.
		ch <- g.joinResponseLocked(m)
		g.beatLocked(m)
	default:
		m.waitJoin(ch)
		g.prepareRebalanceLocked()
	}
	return ch, nil
}

// addMemberLocked adds a member of id, which j joins, and rebalances.
func (g *wireGroup) addMemberLocked(id string, j *joinRequest) chan *kmsg.JoinGroupResponse {
	m := &wireMember{id: id, instanceID: j.instanceID}
	m.updateLocked(j)
	if len(g.members) == 0 {
		g.protocolType = j.req.ProtocolType
	}
	g.putMemberLocked(m)
	if j.instanceID != "" {
		g.static[j.instanceID] = id
	}
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	m.waitJoin(ch)
	if g.state == groupPreparingRebalance {
		g.maybeCompleteJoinLocked()
	} else {
		g.prepareRebalanceLocked()
	}
	return ch
}

// replaceStaticLocked gives the place of old, the member of j's instance
// id, to a new member id (Kafka's updateStaticMemberAndRebalance): old's
// waiting requests, and its later ones, are FENCED_INSTANCE_ID. In a
// Stable group, a follower whose protocols did not change keeps its
// assignment without a rebalance.
func (g *wireGroup) replaceStaticLocked(old *wireMember, j *joinRequest) (chan *kmsg.JoinGroupResponse, *kmsg.JoinGroupResponse) {
	if !g.supportsLocked(j.req.ProtocolType, j.req.Protocols, old.id) {
		return nil, joinError(errInconsistentGroupProtocol, "")
	}
	old.answerLocked(errFencedInstanceID)
	delete(g.members, old.id)
	wasLeader := g.leader == old.id
	old.id = newMemberID(j.clientID)
	g.members[old.id], g.static[j.instanceID] = old, old.id
	if wasLeader {
		g.leader = old.id
	}
	changed := old.updateLocked(j)
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	switch {
	case g.state == groupStable && !changed && !wasLeader:
		ch <- g.joinResponseLocked(old)
		g.beatLocked(old)
	case g.state == groupPreparingRebalance:
		old.waitJoin(ch)
		g.maybeCompleteJoinLocked()
	default:
		old.waitJoin(ch)
		g.prepareRebalanceLocked()
	}
	return ch, nil
}

// updateLocked takes j's timeouts, client and protocols, and reports
// whether the protocols changed.
func (m *wireMember) updateLocked(j *joinRequest) bool {
	m.session, m.rebalance = j.session, j.rebalance
	m.clientID, m.clientHost = j.clientID, j.clientHost
	changed := !slices.EqualFunc(m.protocols, j.req.Protocols, func(a, b kmsg.JoinGroupRequestProtocol) bool {
		return a.Name == b.Name && bytes.Equal(a.Metadata, b.Metadata)
	})
	// The request's bytes are the connection's buffer, reused for its
	// next request: the metadata is copied.
	m.protocols = make([]kmsg.JoinGroupRequestProtocol, len(j.req.Protocols))
	for i, p := range j.req.Protocols {
		m.protocols[i] = kmsg.JoinGroupRequestProtocol{Name: p.Name, Metadata: bytes.Clone(p.Metadata)}
	}
	return changed
}

// waitJoin makes ch the channel m's JoinGroup response goes on; a
// JoinGroup of m still waiting is answered REBALANCE_IN_PROGRESS.
func (m *wireMember) waitJoin(ch chan *kmsg.JoinGroupResponse) {
	if m.join != nil {
		m.join <- joinError(errRebalanceInProgress, m.id)
	}
	m.join = ch
	if m.timer != nil {
		m.timer.Stop()
	}
}
