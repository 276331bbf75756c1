package broker

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The rebalance of a classic group (Kafka's GroupCoordinator and
// GroupMetadata: kafka/coordinator/group): the session timers that evict
// members, the rebalance timer that ends a join, the next generation and
// its protocol, and the JoinGroup responses.

// beatLocked restarts m's session timer.
func (g *wireGroup) beatLocked(m *wireMember) {
	if m.timer != nil {
		m.timer.Stop()
	}
	m.beats++
	beats := m.beats
	gs := &g.srv.groups
	m.timer = time.AfterFunc(m.session, func() {
		gs.mu.Lock()
		defer gs.mu.Unlock()
		if g.members[m.id] != m || m.beats != beats || m.join != nil || m.sync != nil {
			return
		}
		g.removeLocked(m, errUnknownMemberID)
	})
}

// addPendingLocked remembers id, handed out with MEMBER_ID_REQUIRED, for
// session.
func (g *wireGroup) addPendingLocked(id string, session time.Duration) {
	gs := &g.srv.groups
	var t *time.Timer
	t = time.AfterFunc(session, func() {
		gs.mu.Lock()
		defer gs.mu.Unlock()
		if g.pending[id] != t {
			return
		}
		g.dropPendingLocked(id)
		g.maybeCompleteJoinLocked() // before the release, which forgets the group only once it is Empty
		g.releaseIfUnusedLocked()
	})
	g.putPendingLocked(id, t)
}

// removeLocked takes m out of g, answers its waiting JoinGroup or
// SyncGroup with code, and rebalances the others (Kafka's
// removeMemberAndUpdateGroup).
func (g *wireGroup) removeLocked(m *wireMember, code int16) {
	if m.timer != nil {
		m.timer.Stop()
	}
	g.dropMemberLocked(m.id)
	if m.instanceID != "" && g.static[m.instanceID] == m.id {
		delete(g.static, m.instanceID)
	}
	m.answerLocked(code)
	switch g.state {
	case groupStable, groupCompletingRebalance:
		g.prepareRebalanceLocked()
	case groupPreparingRebalance:
		g.maybeCompleteJoinLocked()
	}
	g.releaseIfUnusedLocked()
}

// answerLocked answers m's waiting JoinGroup or SyncGroup with code.
func (m *wireMember) answerLocked(code int16) {
	if m.join != nil {
		m.join <- joinError(code, m.id)
		m.join = nil
	}
	if m.sync != nil {
		m.sync <- syncError(code)
		m.sync = nil
	}
}

// prepareRebalanceLocked starts a rebalance (Kafka's prepareRebalance):
// the members waiting in SyncGroup are told REBALANCE_IN_PROGRESS and
// join again, as the others learn from their next heartbeat; the join
// ends when every member has joined, or after the longest rebalance
// timeout, without those that have not.
func (g *wireGroup) prepareRebalanceLocked() {
	if g.state == groupCompletingRebalance {
		for _, m := range g.members {
			m.assignment = nil
			if m.sync != nil {
				m.sync <- syncError(errRebalanceInProgress)
				m.sync = nil
				g.beatLocked(m)
			}
		}
	}
	g.state = groupPreparingRebalance
	var timeout time.Duration
	for _, m := range g.members {
		timeout = max(timeout, m.rebalance)
	}
	if g.rebalance != nil {
		g.rebalance.Stop()
	}
	g.rebalances++
	n := g.rebalances
	gs := &g.srv.groups
	g.rebalance = time.AfterFunc(timeout, func() {
		gs.mu.Lock()
		defer gs.mu.Unlock()
		if g.rebalances != n || g.state != groupPreparingRebalance {
			return
		}
		for _, m := range g.members {
			if m.join == nil {
				g.removeMemberQuietlyLocked(m)
			}
		}
		for id, t := range g.pending {
			t.Stop()
			g.dropPendingLocked(id)
		}
		g.completeJoinLocked()
		g.releaseIfUnusedLocked()
	})
	g.maybeCompleteJoinLocked()
}

// removeMemberQuietlyLocked takes m, which waits for nothing, out of g
// without rebalancing: the rebalance under way goes on without it.
func (g *wireGroup) removeMemberQuietlyLocked(m *wireMember) {
	if m.timer != nil {
		m.timer.Stop()
	}
	g.dropMemberLocked(m.id)
	if m.instanceID != "" && g.static[m.instanceID] == m.id {
		delete(g.static, m.instanceID)
	}
}

// maybeCompleteJoinLocked completes the join once every member has
// joined and no member id handed out is still to join.
func (g *wireGroup) maybeCompleteJoinLocked() {
	if g.state != groupPreparingRebalance || len(g.pending) > 0 {
		return
	}
	for _, m := range g.members {
		if m.join == nil {
			return
		}
	}
	g.completeJoinLocked()
}

// completeJoinLocked starts the next generation (Kafka's
// initNextGeneration): the protocol every member supports, a leader, and
// the JoinGroup responses, the leader's with every member's metadata.
// Without members the group is Empty, and its record in the store says
// so.
func (g *wireGroup) completeJoinLocked() {
	if g.rebalance != nil {
		g.rebalance.Stop()
		g.rebalance = nil
	}
	g.generation++
	if len(g.members) == 0 {
		protocolType := g.protocolType
		g.state, g.protocol, g.protocolType, g.leader = groupEmpty, "", "", ""
		g.publishLocked(protocolType)
		return
	}
	if g.members[g.leader] == nil {
		g.leader = ""
		for id := range g.members {
			if g.leader == "" || id < g.leader {
				g.leader = id
			}
		}
	}
	g.protocol = g.selectProtocolLocked()
	g.state = groupCompletingRebalance
	for _, m := range g.members {
		m.assignment = nil
		if m.join != nil {
			m.join <- g.joinResponseLocked(m)
			m.join = nil
		}
		g.beatLocked(m)
	}
}

// joinResponseLocked is m's JoinGroup response for the current
// generation: the leader's lists the members and their metadata for the
// protocol chosen.
func (g *wireGroup) joinResponseLocked(m *wireMember) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Generation = g.generation
	protocolType, protocol := g.protocolType, g.protocol
	resp.ProtocolType, resp.Protocol = &protocolType, &protocol
	resp.LeaderID, resp.MemberID = g.leader, m.id
	if m.id == g.leader {
		for _, o := range g.sortedMembersLocked() {
			rm := kmsg.NewJoinGroupResponseMember()
			rm.MemberID = o.id
			if o.instanceID != "" {
				rm.InstanceID = &o.instanceID
			}
			rm.ProtocolMetadata = o.metadata(g.protocol)
			resp.Members = append(resp.Members, rm)
		}
	}
	return resp
}

// sortedMembersLocked returns g's members sorted by id.
func (g *wireGroup) sortedMembersLocked() []*wireMember {
	return slices.SortedFunc(maps.Values(g.members), func(a, b *wireMember) int { return strings.Compare(a.id, b.id) })
}

// metadata returns m's metadata for protocol, nil if it does not
// support it.
func (m *wireMember) metadata(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

// supportsLocked reports whether a member with protocols of
// protocolType may join g, whose other members are all but except: the
// same type, and a protocol every member supports (Kafka's
// supportsProtocols).
func (g *wireGroup) supportsLocked(protocolType string, protocols []kmsg.JoinGroupRequestProtocol, except string) bool {
	others := 0
	for _, m := range g.members {
		if m.id != except {
			others++
		}
	}
	if others == 0 {
		return true
	}
	if protocolType != g.protocolType {
		return false
	}
	for _, p := range protocols {
		all := true
		for _, m := range g.members {
			if m.id != except && !m.supports(p.Name) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// supports reports whether m lists protocol.
func (m *wireMember) supports(protocol string) bool {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return true
		}
	}
	return false
}

// selectProtocolLocked picks the protocol of the generation as Kafka's
// selectProtocol does: among the protocols every member supports, the
// one most members list first among them; a tie goes to the leader's
// preference.
func (g *wireGroup) selectProtocolLocked() string {
	leader := g.members[g.leader]
	var candidates []string
	for _, p := range leader.protocols {
		all := true
		for _, m := range g.members {
			if !m.supports(p.Name) {
				all = false
				break
			}
		}
		if all {
			candidates = append(candidates, p.Name)
		}
	}
	votes := map[string]int{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			if slices.Contains(candidates, p.Name) {
				votes[p.Name]++
				break
			}
		}
	}
	best := ""
	for _, c := range candidates {
		if best == "" || votes[c] > votes[best] {
			best = c
		}
	}
	return best
}

// joinError is a JoinGroup response with code.
func joinError(code int16, memberID string) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.ErrorCode, resp.MemberID = code, memberID
	return resp
}

// awaitGroup waits for the response of a JoinGroup or SyncGroup that
// waits for the rebalance; Server.Close ends the wait with
// ErrServerClosed.
func awaitGroup[R kmsg.Response](srv *Server, wait <-chan R) (kmsg.Response, error) {
	select {
	case resp := <-wait:
		return resp, nil
	case <-srv.ctx.Done():
		return nil, ErrServerClosed
	}
}
