package broker

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxGroupSize caps a group's members, with the member ids handed out
// with MEMBER_ID_REQUIRED not used yet (Kafka's group.max.size, unbounded
// by default there): a JoinGroup past it is GROUP_MAX_SIZE_REACHED, so
// that the requests of a client that never joins with its id bound what
// the group holds. A variable for tests.
var maxGroupSize = 10000

// maxWireMembers caps the members and handed-out member ids of all the
// classic wire groups together: a JoinGroup of a new member past it is
// COORDINATOR_NOT_AVAILABLE, which clients retry, so that JoinGroups to
// ever new groups, each a group of one, bound what the server holds until
// their session timeouts (up to 30 minutes) have passed. It caps the
// members of the KIP-848 consumer groups (consumerGroups.members) as
// well, counted on their own. A variable for tests.
var maxWireMembers = 100000

// The session timeouts a member may ask for: Kafka's defaults of
// group.min.session.timeout.ms and group.max.session.timeout.ms.
const (
	minSessionTimeout = 6 * time.Second
	maxSessionTimeout = 30 * time.Minute
)

// groupState is the state of a classic group, Kafka's GroupState
// (kafka/coordinator/group/GroupMetadata.scala).
type groupState int8

const (
	// groupEmpty: no members; the group may have committed offsets.
	groupEmpty groupState = iota
	// groupPreparingRebalance: members are (re)joining; JoinGroup
	// responses wait until every known member has joined or the
	// rebalance timeout has passed.
	groupPreparingRebalance
	// groupCompletingRebalance: the generation is set and the members
	// know it; SyncGroup responses wait for the leader's assignment.
	groupCompletingRebalance
	// groupStable: every member has its assignment.
	groupStable
	// groupDead: the group was deleted.
	groupDead
)

// String returns Kafka's name of the state, as DescribeGroups and
// ListGroups give it.
func (s groupState) String() string {
	switch s {
	case groupEmpty:
		return "Empty"
	case groupPreparingRebalance:
		return "PreparingRebalance"
	case groupCompletingRebalance:
		return "CompletingRebalance"
	case groupStable:
		return "Stable"
	case groupDead:
		return "Dead"
	}
	return "Unknown"
}

// groups are the classic groups of wire clients. One mutex guards them
// all; no handler holds it while it waits for a rebalance. The store's
// group of the same name is claimed (Store.ClaimGroup) while the wire
// group has members, so that no strata.Consumer joins it meanwhile.
type groups struct {
	mu struct {
		sync.Mutex
		m map[string]*wireGroup
		n int // the members and pending ids of every group in m
	}
}

// wireGroup is one classic group of wire clients: the members, their
// protocols and assignments, and the generation. Its fields are guarded
// by groups.mu; its methods named ...Locked need it held.
type wireGroup struct {
	srv          *Server
	name         string
	state        groupState
	protocolType string // the members' (all the same), "" when empty
	protocol     string // the protocol of the generation, "" when empty
	generation   int32
	leader       string
	members      map[string]*wireMember
	// pending are the member ids handed out with MEMBER_ID_REQUIRED
	// (KIP-394) that have not joined with them yet, each with the timer
	// that forgets it after its session timeout.
	pending map[string]*time.Timer
	// static maps a group.instance.id (KIP-345) to its member's id.
	static map[string]string
	// rebalance ends a PreparingRebalance after the longest rebalance
	// timeout of the members; rebalances counts the rebalances begun, so
	// that the timer of an earlier one does nothing.
	rebalance  *time.Timer
	rebalances uint64
	// release gives back the claim on the store's group, held while the
	// group has members or pending ones; nil when not held.
	release func()
}

// wireMember is a member of a wireGroup.
type wireMember struct {
	id, instanceID     string
	clientID           string
	clientHost         string // the client's address, "/127.0.0.1"
	session, rebalance time.Duration
	protocols          []kmsg.JoinGroupRequestProtocol // in the member's order of preference
	assignment         []byte                          // from the leader's SyncGroup
	// join and sync are set while the member's JoinGroup or SyncGroup
	// waits for the rebalance; its response is sent on them (buffered),
	// and they are cleared.
	join chan *kmsg.JoinGroupResponse
	sync chan *kmsg.SyncGroupResponse
	// timer evicts the member when it has not been heard from for its
	// session timeout; beats counts its resets, so that a timer reset
	// since does nothing. A member waiting in JoinGroup or SyncGroup is
	// not evicted.
	timer *time.Timer
	beats uint64
}

// close forgets every group, stopping their timers, recording in the
// store those with members empty and releasing their claims on the
// store's groups, which the store's own consumers may then join.
// Server.Close calls it once no handler runs.
func (gs *groups) close() {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	for name, g := range gs.mu.m {
		for _, m := range g.members {
			if m.timer != nil {
				m.timer.Stop()
			}
		}
		for _, t := range g.pending {
			t.Stop()
		}
		if g.rebalance != nil {
			g.rebalance.Stop()
		}
		if len(g.members) > 0 {
			// The members go with the server: the store, which lives on,
			// records the group empty.
			clear(g.members)
			protocolType := g.protocolType
			g.generation++
			g.state, g.protocol, g.protocolType, g.leader = groupEmpty, "", "", ""
			g.publishLocked(protocolType)
		}
		clear(g.members)
		clear(g.pending)
		if g.release != nil {
			g.release()
			g.release = nil
		}
		delete(gs.mu.m, name)
	}
	gs.mu.n = 0
}

// groupLocked returns the group named name, nil if there is none.
func (gs *groups) groupLocked(name string) *wireGroup {
	return gs.mu.m[name]
}

// addLocked returns the group named name, creating it Empty.
func (gs *groups) addLocked(srv *Server, name string) *wireGroup {
	if g := gs.mu.m[name]; g != nil {
		return g
	}
	if gs.mu.m == nil {
		gs.mu.m = map[string]*wireGroup{}
	}
	g := &wireGroup{
		srv: srv, name: name,
		members: map[string]*wireMember{},
		pending: map[string]*time.Timer{},
		static:  map[string]string{},
	}
	gs.mu.m[name] = g
	return g
}

// memberCode is the error code (errNone if none) of an offset commit by
// memberID at generation for group, as Kafka's ClassicGroup
// validateOffsetCommit gives it: a commit at a negative generation (a
// standalone commit: memberID "", generation -1) is accepted while the
// group has no wire members; otherwise the member must be a member
// (UNKNOWN_MEMBER_ID) of the current generation (ILLEGAL_GENERATION),
// and the group not between a JoinGroup and its SyncGroup
// (REBALANCE_IN_PROGRESS). A member's commit counts as its heartbeat, as
// in Kafka.
func (srv *Server) memberCode(group, memberID string, generation int32) int16 {
	return srv.memberCodeFor(group, memberID, "", generation)
}

// memberCodeFor is memberCode for a member that may be static: an
// instance id that belongs to another member is FENCED_INSTANCE_ID. A
// member of a KIP-848 consumer group (ConsumerGroupHeartbeat) commits at
// its member epoch (STALE_MEMBER_EPOCH), as Kafka's ConsumerGroup
// validateOffsetCommit has it.
func (srv *Server) memberCodeFor(group, memberID, instanceID string, generation int32) int16 {
	if _, _, code, ok := srv.consumers.memberEpoch(group, memberID, generation); ok {
		return code
	}
	gs := &srv.groups
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.groupLocked(group)
	if g == nil || len(g.members) == 0 {
		if generation < 0 {
			return errNone
		}
		return errUnknownMemberID
	}
	if memberID == "" && instanceID == "" && generation < 0 {
		return errUnknownMemberID
	}
	if code := g.checkMemberLocked(memberID, instanceID); code != errNone {
		return code
	}
	if generation != g.generation {
		return errIllegalGeneration
	}
	if g.state == groupCompletingRebalance {
		return errRebalanceInProgress
	}
	g.beatLocked(g.members[memberID])
	return errNone
}

// checkMemberLocked is Kafka's validateMember: the code for a request of
// memberID (with instanceID, if static) that is not g's member.
func (g *wireGroup) checkMemberLocked(memberID, instanceID string) int16 {
	if instanceID != "" {
		id, ok := g.static[instanceID]
		switch {
		case !ok:
			return errUnknownMemberID
		case id != memberID:
			return errFencedInstanceID
		}
	}
	if g.members[memberID] == nil {
		return errUnknownMemberID
	}
	return errNone
}

// newMemberID returns a member id as Kafka makes them: the client id, a
// dash and a random UUID.
func newMemberID(clientID string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return clientID + "-" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// claimLocked claims the store's group for g's members, if not claimed
// yet: false if the group has consumers in the process.
func (g *wireGroup) claimLocked() bool {
	if g.release != nil {
		return true
	}
	release, err := g.srv.store.ClaimGroup(g.name)
	if err != nil {
		return false
	}
	g.release = release
	return true
}

// releaseIfUnusedLocked gives back the claim on the store's group once g
// has neither members nor pending ones, and forgets g once it is Empty
// too (its committed offsets are the store's).
func (g *wireGroup) releaseIfUnusedLocked() {
	if len(g.members) > 0 || len(g.pending) > 0 {
		return
	}
	if g.release != nil {
		g.release()
		g.release = nil
	}
	if gs := &g.srv.groups; g.state == groupEmpty && gs.mu.m[g.name] == g {
		delete(gs.mu.m, g.name)
	}
}

// putMemberLocked adds m to g's members, and dropMemberLocked takes the
// member of id out; putPendingLocked and dropPendingLocked do the same
// with the member ids handed out. They keep the count maxWireMembers caps.
func (g *wireGroup) putMemberLocked(m *wireMember) {
	if g.members[m.id] == nil {
		g.srv.groups.mu.n++
	}
	g.members[m.id] = m
}

func (g *wireGroup) dropMemberLocked(id string) {
	if _, ok := g.members[id]; ok {
		g.srv.groups.mu.n--
		delete(g.members, id)
	}
}

func (g *wireGroup) putPendingLocked(id string, t *time.Timer) {
	if _, ok := g.pending[id]; !ok {
		g.srv.groups.mu.n++
	}
	g.pending[id] = t
}

func (g *wireGroup) dropPendingLocked(id string) {
	if _, ok := g.pending[id]; ok {
		g.srv.groups.mu.n--
		delete(g.pending, id)
	}
}

// str is *s, "" for nil.
func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
